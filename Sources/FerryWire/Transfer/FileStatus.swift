/// How one file of a transfer ended on the receiver's side (u8 on the wire, in `FileResult`).
///
/// An open set, so a newer peer's outcome is shown as "unknown status (N)" rather than rejected. The
/// descriptions are written for the sending user ("the receiver ...").
public struct FileStatus: RawRepresentable, Hashable, Sendable, CustomStringConvertible {
    public var rawValue: UInt8

    public init(rawValue: UInt8) {
        self.rawValue = rawValue
    }

    /// Verified and published; the result's detail is the published relative name.
    public static let published = FileStatus(rawValue: 0)
    public static let hashMismatch = FileStatus(rawValue: 1)
    public static let writeFailed = FileStatus(rawValue: 2)
    /// One chunk arrived corrupt three times.
    public static let corruptChunks = FileStatus(rawValue: 3)
    public static let refused = FileStatus(rawValue: 4)
    public static let cancelled = FileStatus(rawValue: 5)
    /// The sender's file changed while it was read (size or modification time).
    public static let sourceChanged = FileStatus(rawValue: 6)

    /// True only for `.published`.
    public var isSuccess: Bool { self == .published }

    public var description: String {
        switch self {
        case .published: "published"
        case .hashMismatch: "the received file did not match its digest"
        case .writeFailed: "the receiver could not write the file"
        case .corruptChunks: "chunks kept arriving corrupt"
        case .refused: "refused by the receiver"
        case .cancelled: "cancelled"
        case .sourceChanged: "the file changed while it was being sent"
        default: "unknown status (\(rawValue))"
        }
    }
}
