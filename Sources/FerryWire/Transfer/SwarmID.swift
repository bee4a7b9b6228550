/// Names one swarm broadcast: 16 random bytes, the same for every recipient of the broadcast.
///
/// Each recipient still has its own transfer (and `TransferID`) with the sender; the swarm ID is what members
/// name in the frames they exchange with each other (`SwarmHave`, `SwarmRequest`, `SwarmRefuse`, and the
/// transferID field of a relayed `Chunk`). Chosen by the sender from a cryptographically secure generator, so it
/// never equals a transfer ID in use on the same link. Shown as 32 lowercase hex digits.
public struct SwarmID: Hashable, Sendable, CustomStringConvertible {
    /// Number of bytes.
    public static let length = 16

    /// The 16 random bytes.
    public let bytes: [UInt8]

    /// Nil unless `bytes` has exactly 16 bytes.
    public init?(bytes: [UInt8]) {
        guard bytes.count == Self.length else { return nil }
        self.bytes = bytes
    }

    /// The swarm ID with the bytes of a transfer ID: how a relayed chunk's transferID field is read.
    public init(_ transferID: TransferID) {
        bytes = transferID.bytes
    }

    /// A new ID from the system's cryptographically secure generator.
    public static func random() -> SwarmID {
        SwarmID(TransferID.random())
    }

    /// A new ID from `generator` (tests pass a seeded one).
    public static func random<Generator: RandomNumberGenerator>(using generator: inout Generator) -> SwarmID {
        SwarmID(TransferID.random(using: &generator))
    }

    /// The same bytes as a transfer ID: what a member writes in the transferID field of a chunk it relays.
    public var transferID: TransferID {
        guard let id = TransferID(bytes: bytes) else { preconditionFailure("a swarm ID of \(bytes.count) bytes") }
        return id
    }

    /// 32 lowercase hex digits.
    public var description: String { Hex.string(bytes) }
}

extension ByteReader {
    mutating func readSwarmID(_ field: String) throws(WireError) -> SwarmID {
        guard let swarmID = SwarmID(bytes: try readBytes(count: SwarmID.length, field)) else {
            throw .malformed("\(context): bad \(field)")
        }
        return swarmID
    }
}

extension ByteWriter {
    mutating func write(_ swarmID: SwarmID) {
        write(bytes: swarmID.bytes)
    }
}
