import FerryWire

/// Whether this session takes new connections: GameKit's matchmaking-server states.
public enum ServerState: String, Equatable, Sendable {
    /// Not started, or a client: no connections are taken.
    case idle
    /// Connection requests are answered (by policy or by the user).
    case acceptingConnections
    /// Requests are denied with "not accepting connections" (for instance while a game, or a transfer, runs).
    case ignoringNewConnections
}

/// How connection requests are answered when nobody is asked interactively.
public enum AcceptPolicy: String, Equatable, Sendable, CaseIterable {
    /// Surface each request as an event and wait for `accept` or `deny`.
    case ask
    /// Accept every request that the limits allow.
    case all
    /// Deny every request.
    case none
    /// Accept peers whose device ID is pinned in the trust store; deny every other one without asking.
    case trusted
}

/// The decision on one connection request: a pure function of the session's situation.
public enum Admission: Equatable, Sendable {
    case accept
    case ask
    case deny(Deny)

    /// Decides on a request. The order matters: a client never accepts, a server that ignores new connections
    /// says so, a duplicate is refused before the limit is counted, and the limit before the policy.
    public static func decide(
        mode: PeerMode, serverState: ServerState, alreadyConnected: Bool, connectedCount: Int, maxPeers: Int,
        policy: AcceptPolicy, peerIsTrusted: Bool = false
    ) -> Admission {
        if mode == .client {
            return .deny(Deny(reason: .notAccepting, detail: "this peer is a client and does not take connections"))
        }
        if serverState != .acceptingConnections {
            return .deny(Deny(reason: .notAccepting))
        }
        if alreadyConnected {
            return .deny(Deny(reason: .alreadyConnected))
        }
        if connectedCount >= maxPeers {
            return .deny(Deny(reason: .serverFull, detail: "\(connectedCount) of \(maxPeers) peers connected"))
        }
        switch policy {
        case .all: return .accept
        case .ask: return .ask
        case .none: return .deny(Deny(reason: .deniedByUser))
        case .trusted:
            // Reason 6 tells the requester the truth (it is not pinned here), and the detail says it to peers that
            // predate reason 6.
            return peerIsTrusted ? .accept : .deny(Deny(reason: .untrusted, detail: "only trusted peers are accepted"))
        }
    }
}
