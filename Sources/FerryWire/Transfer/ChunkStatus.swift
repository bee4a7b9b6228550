/// What a receiver did with one chunk (u8 on the wire, in `ChunkAck`).
///
/// An open set so a newer peer's status is carried; the transfer engine treats an unknown status as a
/// protocol error.
public struct ChunkStatus: RawRepresentable, Hashable, Sendable, CustomStringConvertible {
    /// The status as sent.
    public var rawValue: UInt8

    /// Any value: an unknown status is carried (the engine treats it as a protocol error).
    public init(rawValue: UInt8) {
        self.rawValue = rawValue
    }

    /// Written to the staging file.
    public static let stored = ChunkStatus(rawValue: 0)
    /// The chunk's SHA-256 did not match or the data did not inflate to `rawLength` bytes: send it again.
    public static let corrupt = ChunkStatus(rawValue: 1)
    /// A swarm member stored a chunk that reached it from another member (verified against the sender's digest):
    /// the sender counts it as held, not as sent by itself (PROTOCOL.md 11.11).
    public static let storedFromPeer = ChunkStatus(rawValue: 2)

    /// The status in words, for logs.
    public var description: String {
        switch self {
        case .stored: "stored"
        case .corrupt: "corrupt"
        case .storedFromPeer: "stored from a peer"
        default: "unknown status (\(rawValue))"
        }
    }
}
