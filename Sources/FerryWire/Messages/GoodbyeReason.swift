/// Why a peer closes a link (u8 on the wire).
///
/// An open set, like `DenyReason`: an unknown reason from a newer peer is carried, not rejected.
public struct GoodbyeReason: RawRepresentable, Hashable, Sendable, CustomStringConvertible {
    /// The reason as sent.
    public var rawValue: UInt8

    /// Any value: an unknown reason is carried and shown by its number.
    public init(rawValue: UInt8) {
        self.rawValue = rawValue
    }

    /// The sender is done with this peer (a plain disconnect, or a duplicate link closed).
    public static let disconnected = GoodbyeReason(rawValue: 1)
    /// The other side was silent too long, or did not finish its handshake in time.
    public static let timedOut = GoodbyeReason(rawValue: 2)
    /// The other side broke the protocol; the detail says how.
    public static let protocolError = GoodbyeReason(rawValue: 3)
    /// The sender's process is stopping (SIGTERM, a service manager).
    public static let shuttingDown = GoodbyeReason(rawValue: 4)
    /// The sender's person (or policy) did not accept the peer on a link the sender opened itself: the initiator's
    /// counterpart of deny 1 `deniedByUser`, for a chat where either side may dial (PROTOCOL.md 4.7).
    public static let notAccepted = GoodbyeReason(rawValue: 5)

    /// The reason in words, for logs and messages.
    public var description: String {
        switch self {
        case .disconnected: "disconnected"
        case .timedOut: "timed out"
        case .protocolError: "protocol error"
        case .shuttingDown: "shutting down"
        case .notAccepted: "not accepted"
        default: "unknown reason (\(rawValue))"
        }
    }
}
