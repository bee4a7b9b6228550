import FerrySystem
import Foundation
import FerryWire

/// A peer's state as GameKit reports it (`GKPeerStateAvailable` ... `GKPeerStateDisconnected`).
public enum PeerState: String, Equatable, Sendable {
    /// Discovered and not connected.
    case available
    /// No longer discovered (left, or missed three announcements).
    case unavailable
    /// A connection to it is being asked for.
    case connecting
    /// Connected: messages and transfers flow.
    case connected
    /// The connection ended.
    case disconnected
}

/// What the session knows of one peer. Discovery presence and connection state are tracked apart.
public struct PeerInfo: Equatable, Sendable {
    /// Its peer ID in this session (random per session, as GameKit's).
    public var peerID: PeerID
    /// Its install's device ID: the SHA-256 of its certificate, stable across sessions.
    public var deviceID: DeviceID
    /// The name it announces (escape it before printing it: a peer chooses it).
    public var displayName: String
    /// Server, client or peer.
    public var mode: PeerMode
    /// Where its links are accepted (discovered or manual), if known.
    public var address: SocketAddress?
    /// Whether discovery currently sees it.
    public var isDiscovered: Bool
    /// Whether it announces that it takes connections.
    public var isAcceptingConnections: Bool
    /// Where its connection stands.
    public var state: PeerState
    /// The 6-digit code both people can compare on first contact, from the connected link (before the peer is
    /// connected, from the latest link that agreed one; nil before any): equal codes on both screens mean nobody
    /// sits in the middle. A second link to a connected peer (denied, or dropped as a duplicate) leaves it alone.
    public var pairingCode: String?
    /// Whether its device ID is pinned (trusted).
    public var isTrusted: Bool
    /// Whether its application reads messages: false when it announced `filesOnly` (a `ferry receive`, which only
    /// takes files), so that a chat does not count it as a member.
    public var takesMessages: Bool
    /// Whether its connected link (the last one, once it ended) is a swarm link between recipients of one broadcast
    /// (`Session.vouch(for:reason:)`): admitted without a prompt for the transfer engine, not a peer that asked to
    /// connect. Applications that list, greet or prompt for peers leave such a peer out.
    public var isSwarmLink: Bool
    /// The protocol it speaks: "ferry" for every peer of a session; another name ("localsend") for a peer an adapter
    /// attached to the transfer engine (`TransferEngine.attachForeignPeer`), which has no ferry link.
    public var protocolName: String

    /// A peer as described (for tests and applications that keep their own tables).
    public init(
        peerID: PeerID, deviceID: DeviceID, displayName: String, mode: PeerMode, address: SocketAddress?,
        isDiscovered: Bool, isAcceptingConnections: Bool, state: PeerState, pairingCode: String? = nil,
        isTrusted: Bool = false, takesMessages: Bool = true, isSwarmLink: Bool = false, protocolName: String = "ferry"
    ) {
        self.peerID = peerID
        self.deviceID = deviceID
        self.displayName = displayName
        self.mode = mode
        self.address = address
        self.isDiscovered = isDiscovered
        self.isAcceptingConnections = isAcceptingConnections
        self.state = state
        self.pairingCode = pairingCode
        self.isTrusted = isTrusted
        self.takesMessages = takesMessages
        self.isSwarmLink = isSwarmLink
        self.protocolName = protocolName
    }
}

/// Everything a session reports, in order, on its `events` stream.
public enum SessionEvent: Sendable {
    /// GameKit's `session:peer:didChangeState:`; `reason` says why a connection failed or ended, where known.
    case peerStateChanged(PeerInfo, PeerState, reason: SessionError?)
    /// GameKit's `didReceiveConnectionRequestFromPeer:`: answer with `accept(_:)` or `deny(_:)`.
    case connectionRequested(PeerInfo)
    /// This side asked `peer` to connect and both pairing nonces are known (PROTOCOL.md 7): `peer.pairingCode` is
    /// the code the peer's person may be comparing now, before its answer, which follows as `.connected` or
    /// `.disconnected` (issue 28, 10: the side that dials shows the code while the other side is asked).
    case awaitingAnswer(PeerInfo)
    /// A request reported by `.connectionRequested` ended before `accept(_:)` or `deny(_:)`: the peer gave up, its
    /// link failed, or the decision timeout passed. Nobody is left to answer about (an application that asks its
    /// user takes the question away).
    case requestEnded(PeerInfo)
    /// The session refused an authenticated peer's connection request by itself (its accept policy, its limits,
    /// the prompt rate), without asking: who it was and what it was told, so that an unattended operator can see
    /// who tried and pin them. Requests the application denies with `deny(_:)` are not reported again.
    case connectionDenied(PeerInfo, reason: DenyReason, detail: String)
    /// GameKit's `receiveData:fromPeer:inSession:context:`: a message a connected peer sent with
    /// `Session.send(_:to:mode:)`, its sender, and how it travelled. Reliable messages arrive in the order each peer
    /// sent them; unreliable ones may be lost or reordered, never repeated (replays are dropped).
    case dataReceived(Data, from: PeerInfo, mode: DataMode)
    /// GameKit's `session:didFailWithError:`: a problem of the session itself, not of one peer.
    case sessionError(SessionError)
}
