/// What a peer does in a session, as in GameKit's `GKSessionMode`.
///
/// A closed set: a value outside it on the wire is an invalid field. Sent in the hello and in beacons.
public enum PeerMode: UInt8, Sendable, CaseIterable, CustomStringConvertible {
    /// Advertises and accepts connections.
    case server = 1
    /// Browses and connects.
    case client = 2
    /// Both.
    case peer = 3

    /// `server`, `client` or `peer`, as the CLI prints it.
    public var description: String {
        switch self {
        case .server: "server"
        case .client: "client"
        case .peer: "peer"
        }
    }
}
