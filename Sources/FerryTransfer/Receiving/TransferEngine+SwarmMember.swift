import FerrySession
import FerryStateMachines
import FerryWire

/// A member's side of a swarm broadcast (PROTOCOL.md 11.11): the sender's lists and digests, other members'
/// announcements, requests and refusals, relayed chunks.
extension TransferEngine {
    func memberRequestReceived(_ request: SwarmRequest, from peerID: PeerID) async {
        await violation(by: peerID, "a swarmRequest outside any swarm")
    }

    func swarmMembersReceived(_ members: SwarmMembers, from peerID: PeerID) async {
        await violation(by: peerID, "a swarmMembers outside any swarm")
    }

    func chunkDigestsReceived(_ digests: ChunkDigests, from peerID: PeerID) async {
        await violation(by: peerID, "a chunkDigests outside any swarm")
    }

    func swarmHaveReceived(_ have: SwarmHave, from peerID: PeerID) async {
        await violation(by: peerID, "a swarmHave outside any swarm")
    }

    func swarmRefuseReceived(_ refuse: SwarmRefuse, from peerID: PeerID) async {
        await violation(by: peerID, "a swarmRefuse outside any swarm")
    }
}
