/// Why a connection request was denied (u8 on the wire).
///
/// An open set: a reason added by a newer peer is carried and shown as "unknown reason (N)" rather than
/// rejected, so denials stay readable across versions.
public struct DenyReason: RawRepresentable, Hashable, Sendable, CustomStringConvertible {
    public var rawValue: UInt8

    public init(rawValue: UInt8) {
        self.rawValue = rawValue
    }

    public static let deniedByUser = DenyReason(rawValue: 1)
    public static let serverFull = DenyReason(rawValue: 2)
    public static let notAccepting = DenyReason(rawValue: 3)
    public static let alreadyConnected = DenyReason(rawValue: 4)
    public static let sessionMismatch = DenyReason(rawValue: 5)
    /// The acceptor takes connections from pinned (trusted) peers only, and this one is not pinned there.
    public static let untrusted = DenyReason(rawValue: 6)

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
