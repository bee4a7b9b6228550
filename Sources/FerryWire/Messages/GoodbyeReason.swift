/// Why a peer closes a link (u8 on the wire).
///
/// An open set, like `DenyReason`: an unknown reason from a newer peer is carried, not rejected.
public struct GoodbyeReason: RawRepresentable, Hashable, Sendable, CustomStringConvertible {
    public var rawValue: UInt8

    public init(rawValue: UInt8) {
        self.rawValue = rawValue
    }

    public static let disconnected = GoodbyeReason(rawValue: 1)
    public static let timedOut = GoodbyeReason(rawValue: 2)
    public static let protocolError = GoodbyeReason(rawValue: 3)
    public static let shuttingDown = GoodbyeReason(rawValue: 4)

    public var description: String {
        switch self {
        case .disconnected: "disconnected"
        case .timedOut: "timed out"
        case .protocolError: "protocol error"
        case .shuttingDown: "shutting down"
        default: "unknown reason (\(rawValue))"
        }
    }
}
