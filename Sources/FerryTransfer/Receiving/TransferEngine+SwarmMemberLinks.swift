import FerrySession
import FerryStateMachines
import FerrySystem
import FerryWire

/// A member's links to the other members of its swarm: whom it dials (`SwarmDialPolicy`), and what a link that
/// comes up starts.
extension TransferEngine {
    /// Dials every member of the list this side has no link to yet (the other side may dial at the same time: the
    /// session keeps one link, PROTOCOL.md 10.4), as `SwarmDialPolicy` allows: only an address on this member's own
    /// network (loopback only when its link to the sender is), at most 3 times per member and swarm, with a growing
    /// pause between. A member whose address is empty, not a literal IP address, or not allowed is not dialled; it
    /// may still dial this side.
    func dialMembers(_ list: [Int], _ swarmID: SwarmID) {
        guard let swarm = memberSwarms[swarmID] else { return }
        let policy = swarm.dialPolicy ?? SwarmDialPolicy.ofThisHost(sender: swarm.sender.address)
        memberSwarms[swarmID]?.dialPolicy = policy
        for index in list where index != swarm.me && swarm.links[index] == nil && !swarm.dialing.contains(index) {
            let member = swarm.member(index)
            guard let address = Self.memberAddress(member.address) else { continue }
            guard policy.allows(address) else {
                log(2, "swarm \(swarmID): member \(index) at \(address) is not dialled: not on this member's network")
                continue
            }
            let dials = swarm.dials[index]
            let now = clock.now
            guard SwarmDialPolicy.mayDial(attempts: dials?.count ?? 0, last: dials?.last, now: now) else {
                log(2, "swarm \(swarmID): member \(index) is not dialled again yet (\(dials?.count ?? 0) dials so far)")
                continue
            }
            memberSwarms[swarmID]?.dials[index] = ((dials?.count ?? 0) + 1, now)
            memberSwarms[swarmID]?.dialing.insert(index)
            let session = self.session
            Task {
                do {
                    let info = try await session.connect(toMember: member.deviceID, at: address, timeout: .seconds(15))
                    await self.memberDialled(swarmID, index, .success(info.peerID))
                } catch {
                    await self.memberDialled(swarmID, index, .failure(error))
                }
            }
        }
    }

    /// "10.0.0.7:41971" or "[fe80::1%eth0]:41971" as a socket address; nil for anything else (a host name would
    /// need a lookup, which an offer must not make this side do).
    static func memberAddress(_ text: String) -> SocketAddress? {
        guard let colon = text.lastIndex(of: ":") else { return nil }
        var host = String(text[..<colon])
        if host.hasPrefix("["), host.hasSuffix("]") { host = String(host.dropFirst().dropLast()) }
        let bare = host.split(separator: "%", maxSplits: 1).first.map(String.init) ?? host
        guard IPv4Address(bare) != nil || IPv6Address(bare) != nil else { return nil }
        return try? SocketAddress.resolve(text)
    }

    private func memberDialled(_ swarmID: SwarmID, _ index: Int, _ result: Result<PeerID, any Error>) async {
        guard memberSwarms[swarmID]?.dialing.remove(index) != nil else { return }
        switch result {
        case .success(let peerID):
            await memberLinkUp(swarmID, index, peerID)
        case .failure(let error):
            log(1, "swarm \(swarmID): no link to member \(index): \(error)")
            guard memberSwarms[swarmID]?.links[index] == nil else { return }  // it dialled us meanwhile
            let actions = withMemberSwarm(swarmID) { $0.fetcher.linkDown(index) } ?? []
            await carryOut(actions, swarmID)
        }
    }

    /// The link to member `index` is up (dialled, or its first frame arrived).
    func memberLinkUp(_ swarmID: SwarmID, _ index: Int, _ peerID: PeerID) async {
        guard let swarm = memberSwarms[swarmID], swarm.links[index] != peerID else { return }
        if let old = swarm.links[index] { memberSwarms[swarmID]?.linkedMembers[old] = nil }
        memberSwarms[swarmID]?.links[index] = peerID
        memberSwarms[swarmID]?.linkedMembers[peerID] = index
        // The fetcher learns of the link before anything here awaits: a frame of that member handled meanwhile finds
        // the link recorded (`memberIndex`) and must find it up too, or its announcements are ignored, and a member
        // never repeats them (this lost every chunk one member held, now and then, when both dialled each other).
        let actions = withMemberSwarm(swarmID) { $0.fetcher.linkUp(index) } ?? []
        if let name = await session.peer(peerID)?.displayName { memberSwarms[swarmID]?.names[index] = name }
        await carryOut(actions, swarmID)
    }
}
