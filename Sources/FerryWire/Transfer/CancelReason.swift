/// Why one side cancelled a whole transfer (u8 on the wire, in `TransferCancel`).
///
/// An open set, like `GoodbyeReason`: an unknown reason from a newer peer is carried, not rejected.
public struct CancelReason: RawRepresentable, Hashable, Sendable, CustomStringConvertible {
    public var rawValue: UInt8

    public init(rawValue: UInt8) {
        self.rawValue = rawValue
    }

    public static let cancelledByUser = CancelReason(rawValue: 1)
    public static let diskFull = CancelReason(rawValue: 2)
    /// The other side broke the transfer protocol; the detail says how.
    public static let protocolError = CancelReason(rawValue: 3)
    public static let timedOut = CancelReason(rawValue: 4)
    /// The sender could not read a file it offered.
    public static let readFailed = CancelReason(rawValue: 5)
    public static let shuttingDown = CancelReason(rawValue: 6)

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
