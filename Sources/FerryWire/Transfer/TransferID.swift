/// Names one transfer (an offer and everything that follows it) between two peers: 16 random bytes.
///
/// Chosen by the sender at random, so two transfers in flight on one link, or a transfer resumed after a new
/// link, are told apart without any coordination. A distinct type so it cannot be mixed up with other byte
/// strings. Sent on the wire as 16 raw bytes; shown as 32 lowercase hex digits.
public struct TransferID: Hashable, Sendable, CustomStringConvertible {
    /// Number of bytes.
    public static let length = 16

    /// The 16 random bytes.
    public let bytes: [UInt8]

    /// Nil unless `bytes` has exactly 16 bytes.
    public init?(bytes: [UInt8]) {
        guard bytes.count == Self.length else { return nil }
        self.bytes = bytes
    }

    /// Parses exactly 32 hex digits, either case.
    public init?(hex: String) {
        let digits = Array(hex.utf8)
        guard digits.count == Self.length * 2, let bytes = Hex.bytes(digits) else { return nil }
        self.bytes = bytes
    }

    /// A new ID from the system's cryptographically secure generator.
    public static func random() -> TransferID {
        var generator = SystemRandomNumberGenerator()
        return random(using: &generator)
    }

    /// A new ID from `generator` (tests pass a seeded one).
    public static func random<Generator: RandomNumberGenerator>(using generator: inout Generator) -> TransferID {
        var bytes: [UInt8] = []
        bytes.reserveCapacity(Self.length)
        for _ in 0..<(Self.length / 8) {
            let word = generator.next()
            for shift in stride(from: 56, through: 0, by: -8) {
                bytes.append(UInt8(truncatingIfNeeded: word >> UInt64(shift)))
            }
        }
        return TransferID(unchecked: bytes)
    }

    private init(unchecked bytes: [UInt8]) {
        self.bytes = bytes
    }

    /// 32 lowercase hex digits.
    public var description: String { Hex.string(bytes) }
}
