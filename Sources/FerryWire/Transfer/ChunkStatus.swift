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

    /// The status in words, for logs.
    public var description: String {
        switch self {
        case .stored: "stored"
        case .corrupt: "corrupt"
        default: "unknown status (\(rawValue))"
        }
    }
}
