/// Why one side cancelled a whole transfer (u8 on the wire, in `TransferCancel`).
///
/// An open set, like `GoodbyeReason`: an unknown reason from a newer peer is carried, not rejected.
public struct CancelReason: RawRepresentable, Hashable, Sendable, CustomStringConvertible {
    /// The reason as sent.
    public var rawValue: UInt8

    /// Any value: an unknown reason is carried and shown by its number.
    public init(rawValue: UInt8) {
        self.rawValue = rawValue
    }

    /// The user (or application) cancelled the transfer.
    public static let cancelledByUser = CancelReason(rawValue: 1)
    /// The receiver ran out of disk space.
    public static let diskFull = CancelReason(rawValue: 2)
    /// The other side broke the transfer protocol; the detail says how.
    public static let protocolError = CancelReason(rawValue: 3)
    /// The other side stopped answering within the transfer's timeouts.
    public static let timedOut = CancelReason(rawValue: 4)
    /// The sender could not read a file it offered.
    public static let readFailed = CancelReason(rawValue: 5)
    /// The process is stopping (SIGTERM, a service manager); staged data is kept for a resume.
    public static let shuttingDown = CancelReason(rawValue: 6)

    /// The reason in words, for logs and messages.
    public var description: String {
        switch self {
        case .cancelledByUser: "cancelled by the user"
        case .diskFull: "the disk is full"
        case .protocolError: "protocol error"
        case .timedOut: "timed out"
        case .readFailed: "a file could not be read"
        case .shuttingDown: "shutting down"
        default: "unknown reason (\(rawValue))"
        }
    }
}
