/// A cursor over one libFuzzer input: takes control bytes (split sizes, flags, lengths) from the front and hands
/// the rest over as the bytes under test.
///
/// Why: libFuzzer mutates one flat byte string; reading the knobs of a run from that same string lets coverage
/// guidance explore them too (how a stream is cut, which limit applies), and a crash input replays exactly.
/// Reads past the end return zero, so every input, even an empty one, is a valid run.
public struct FuzzInput {
    private let bytes: [UInt8]
    private var index = 0

    public init(_ data: UnsafePointer<UInt8>?, _ size: Int) {
        bytes = Self.bytes(data, size)
    }

    /// A copy of libFuzzer's input (which may be a null pointer when empty).
    public static func bytes(_ data: UnsafePointer<UInt8>?, _ size: Int) -> [UInt8] {
        guard let data, size > 0 else { return [] }
        return Array(UnsafeBufferPointer(start: data, count: size))
    }

    public init(_ bytes: [UInt8]) {
        self.bytes = bytes
    }

    /// Bytes not yet taken.
    public var remainingCount: Int { bytes.count - index }

    /// The next byte, or 0 past the end.
    public mutating func takeByte() -> UInt8 {
        guard index < bytes.count else { return 0 }
        defer { index += 1 }
        return bytes[index]
    }

    /// The next `count` bytes as a big-endian unsigned integer (`count` at most 8), zero-filled past the end.
    public mutating func takeInteger(byteCount count: Int) -> UInt64 {
        precondition((0...8).contains(count), "takeInteger reads at most 8 bytes")
        var value: UInt64 = 0
        for _ in 0..<count {
            value = value << 8 | UInt64(takeByte())
        }
        return value
    }

    /// Up to `count` next bytes (fewer at the end).
    public mutating func takeBytes(_ count: Int) -> [UInt8] {
        let end = index + min(max(count, 0), remainingCount)
        defer { index = end }
        return Array(bytes[index..<end])
    }

    /// Everything not yet taken.
    public mutating func takeRest() -> [UInt8] {
        takeBytes(remainingCount)
    }
}
