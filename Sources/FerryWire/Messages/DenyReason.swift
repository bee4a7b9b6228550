/// Why a connection request was denied (u8 on the wire).
///
/// An open set: a reason added by a newer peer is carried and shown as "unknown reason (N)" rather than
/// rejected, so denials stay readable across versions.
public struct DenyReason: RawRepresentable, Hashable, Sendable, CustomStringConvertible {
    /// The reason as sent.
    public var rawValue: UInt8

    /// Any value: an unknown reason is carried and shown as "unknown reason (N)".
    public init(rawValue: UInt8) {
        self.rawValue = rawValue
    }

    /// The acceptor's user (or application) said no.
    public static let deniedByUser = DenyReason(rawValue: 1)
    /// The acceptor has its maximum number of peers connected.
    public static let serverFull = DenyReason(rawValue: 2)
    /// The acceptor takes no connections now (a client, or a server that stopped accepting).
    public static let notAccepting = DenyReason(rawValue: 3)
    /// The two peers are connected already, on another link.
    public static let alreadyConnected = DenyReason(rawValue: 4)
    /// The hellos name different sessions.
    public static let sessionMismatch = DenyReason(rawValue: 5)
    /// The acceptor takes connections from pinned (trusted) peers only, and this one is not pinned there.
    public static let untrusted = DenyReason(rawValue: 6)

    /// The reason in words, for logs and messages.
    public var description: String {
        switch self {
        case .deniedByUser: "denied by the user"
        case .serverFull: "the server is full"
        case .notAccepting: "not accepting connections"
        case .alreadyConnected: "already connected"
        case .sessionMismatch: "different session"
        case .untrusted: "it accepts trusted peers only"
        default: "unknown reason (\(rawValue))"
        }
    }
}
