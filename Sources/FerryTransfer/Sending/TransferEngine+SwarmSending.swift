import FerrySession
import FerryStateMachines
import FerryWire

/// The sender's side of a swarm broadcast (PROTOCOL.md 11.11): the offer's swarm section, the seeder, digests,
/// member lists, requests and reports from members.
extension TransferEngine {
    /// Whether this engine sends the swarm `swarmID` and `peerID` is one of its members (a `swarmRequest` from it is
    /// for the sender).
    func isSwarmSender(_ swarmID: SwarmID, to peerID: PeerID) -> Bool {
        false
    }

    /// A member asks the sender for a chunk (rule 6).
    func senderRequestReceived(_ request: SwarmRequest, from peerID: PeerID) async {
        await violation(by: peerID, "a swarmRequest for a swarm this side does not send")
    }

    /// A member reports another (rule 5).
    func swarmReportReceived(_ report: SwarmReport, from peerID: PeerID) async {
        await violation(by: peerID, "a swarmReport outside any swarm")
    }
}
