/// Names one transfer (an offer and everything that follows it) between two peers: 16 random bytes.
///
/// Chosen by the sender at random, so two transfers in flight on one link, or a transfer resumed after a new
/// link, are told apart without any coordination. A distinct type so it cannot be mixed up with other byte
/// strings. Sent on the wire as 16 raw bytes; shown as 32 lowercase hex digits.
public struct TransferID: Hashable, Sendable, CustomStringConvertible {
    /// Number of bytes.
    public static let length = 16

    /// The 16 bytes as two big-endian words: no array to allocate, retain and hash byte by byte, since a transfer ID
    /// is parsed from every transfer frame and is a dictionary key on each one's path.
    let high: UInt64
    let low: UInt64

    /// The 16 random bytes.
    public var bytes: [UInt8] {
        var bytes: [UInt8] = []
        bytes.reserveCapacity(Self.length)
        for word in [high, low] {
            for shift in stride(from: 56, through: 0, by: -8) {
                bytes.append(UInt8(truncatingIfNeeded: word >> UInt64(shift)))
            }
        }
        return bytes
    }

    /// Nil unless `bytes` has exactly 16 bytes.
    public init?(bytes: [UInt8]) {
        guard bytes.count == Self.length else { return nil }
        high = bytes[0..<8].reduce(0) { $0 << 8 | UInt64($1) }
        low = bytes[8..<16].reduce(0) { $0 << 8 | UInt64($1) }
    }

    /// Parses exactly 32 hex digits, either case.
    public init?(hex: String) {
        let digits = Array(hex.utf8)
        guard digits.count == Self.length * 2, let bytes = Hex.bytes(digits) else { return nil }
        self.init(bytes: bytes)
    }

    /// The ID of the two big-endian words `high` and `low` (the first 8 bytes and the last 8).
    init(high: UInt64, low: UInt64) {
        self.high = high
        self.low = low
    }

    /// A new ID from the system's cryptographically secure generator.
    public static func random() -> TransferID {
        var generator = SystemRandomNumberGenerator()
        return random(using: &generator)
    }

    /// A new ID from `generator` (tests pass a seeded one): its first word is the first 8 bytes, big-endian.
    public static func random<Generator: RandomNumberGenerator>(using generator: inout Generator) -> TransferID {
        let high = generator.next()
        return TransferID(high: high, low: generator.next())
    }

    /// 32 lowercase hex digits.
    public var description: String { Hex.string(bytes) }
}
