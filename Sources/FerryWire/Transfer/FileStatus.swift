/// How one file of a transfer ended on the receiver's side (u8 on the wire, in `FileResult`).
///
/// An open set, so a newer peer's outcome is shown as "unknown status (N)" rather than rejected. The
/// descriptions are written for the sending user ("the receiver ...").
public struct FileStatus: RawRepresentable, Hashable, Sendable, CustomStringConvertible {
    /// The status as sent.
    public var rawValue: UInt8

    /// Any value: an unknown status is carried and shown as "unknown status (N)".
    public init(rawValue: UInt8) {
        self.rawValue = rawValue
    }

    /// Verified and published; the result's detail is the published relative name.
    public static let published = FileStatus(rawValue: 0)
    /// The file's SHA-256 did not match the sender's: not published.
    public static let hashMismatch = FileStatus(rawValue: 1)
    /// The receiver could not write or publish the file.
    public static let writeFailed = FileStatus(rawValue: 2)
    /// One chunk arrived corrupt three times.
    public static let corruptChunks = FileStatus(rawValue: 3)
    /// The receiver refused the file (its name, or its decision).
    public static let refused = FileStatus(rawValue: 4)
    /// The transfer was cancelled before the file was done.
    public static let cancelled = FileStatus(rawValue: 5)
    /// The sender's file changed while it was read (size or modification time).
    public static let sourceChanged = FileStatus(rawValue: 6)

    /// True only for `.published`.
    public var isSuccess: Bool { self == .published }

    /// The status in words, written for the sending user ("the receiver ...").
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
