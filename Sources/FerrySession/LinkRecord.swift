import FerrySecurity
import FerryStateMachines
import FerrySystem
import FerryWire

/// The session's bookkeeping for one link: its state machine, its stream and writer, who waits on it.
struct LinkRecord: Sendable {
    let id: LinkID
    var machine: LinkStateMachine
    /// The TLS stream over the link's TCP connection.
    let stream: TLSStream
    let writer: LinkWriter
    let remoteAddress: SocketAddress
    /// The peer at the other end, once its hello arrived.
    var peerID: PeerID?
    /// Initiator: the peer we meant to reach (a different one answering is an error).
    var expectedPeer: PeerID?
    /// Initiator of a swarm link: the member's device ID; the link is refused when another device answers.
    var pinnedDevice: DeviceID?
    /// A swarm link: opened to a vouched member, or admitted because its device was vouched for (`Session+Swarm`).
    var isSwarm = false
    /// The 6-digit code of this link, once both pairing nonces are known (`Session.pairingAgreed`): the peer's
    /// code is the one of its connected link, or of the link being agreed while it has none.
    var pairingCode: String?
    /// Callers of `connect` or `probe` waiting for the outcome.
    var waiters: [CheckedContinuation<PeerInfo, any Error>] = []

    var isAcceptor: Bool { machine.role == .acceptor }

    /// Resumes every caller waiting on this link with the outcome.
    func settleWaiters(_ result: Result<PeerInfo, SessionError>) {
        waiters.forEach { $0.resume(with: result) }
    }

    /// Not yet past the hello: what the pre-authentication caps count.
    var isUnauthenticated: Bool {
        machine.state == .awaitingHello
    }
}
