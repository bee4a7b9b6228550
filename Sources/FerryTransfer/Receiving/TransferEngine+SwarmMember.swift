import FerrySession
import FerryStateMachines
import FerrySystem
import FerryWire

/// A member's side of a swarm broadcast (PROTOCOL.md 11.11): the sender's lists and digests, other members'
/// announcements, requests and refusals, relayed chunks. The decisions are `SwarmFetcher`'s; this side carries them
/// out (frames, links, staged reads and writes) in `TransferEngine+SwarmMemberActions`.
extension TransferEngine {
    /// How long a request to another member waits for its answer before the chunk is asked elsewhere (a late answer
    /// is still taken).
    static let swarmRequestTimeout = Duration.seconds(20)
    /// Raw bytes of the chunks a member has asked of other members and not yet received, at most (at least one
    /// chunk): relayed chunks on their way stay within this whatever the number of members (K = 4 to each of 255
    /// others would be 1 GiB of 1 MiB chunks). 12 MiB is what K = 4 to each of 3 others comes to: a broadcast to 4
    /// receivers is not held back (8 MiB made `ferry-bench compare` row 5 slower under load); more members share it.
    static let swarmRelayedBytesInFlight = 12 << 20

    // MARK: Joining and leaving

    /// Whether this side takes part in the offer's swarm: relaying is on, this device is named in the list, and
    /// something was accepted. Then the reply says `relay` and the transfer takes chunks in any order.
    ///
    /// An offer whose swarm ID is live here (a swarm this side is in, through any transfer, from any sender: every
    /// co-member knows the ID) is taken without the swarm, as a plain transfer (PROTOCOL.md 11.11): the live swarm
    /// stays the one its ID names, its sender's frames keep their meaning, and its vouch stays its own.
    func joinsSwarm(_ offer: Offer) -> Bool {
        guard configuration.relay, let swarm = offer.swarm,
            swarm.index(of: session.configuration.deviceID) != nil
        else { return false }
        guard memberSwarms[swarm.swarmID] == nil else {
            log(1, "transfer \(offer.transferID): swarm \(swarm.swarmID) is live here already; taken without the swarm")
            return false
        }
        return true
    }

    /// Starts this member's part: the fetcher, and the session's vouch for the other members (so that their swarm
    /// links are admitted without a prompt). Called as the accepting reply is about to go out.
    func joinSwarm(_ key: IncomingKey) async {
        guard let transfer = incoming[key], let swarm = transfer.offer.swarm,
            let me = swarm.index(of: session.configuration.deviceID)
        else { return }
        let chunk = UInt64(transfer.offer.chunkSize)
        let counts = transfer.files.map { Int(($0.size + chunk - 1) / chunk) }
        let resumed = transfer.files.indices.map { index -> Int in
            let file = transfer.files[index]
            return file.resumeOffset >= file.size ? counts[index] : Int(file.resumeOffset / chunk)
        }
        let fetcher = SwarmFetcher(
            me: me, memberCount: swarm.members.count, chunkCounts: counts, accepted: transfer.files.map(\.accepted),
            resumedChunks: resumed, maxTotalInFlight: max(1, Self.swarmRelayedBytesInFlight / Int(chunk)))
        memberSwarms[swarm.swarmID] = MemberSwarm(
            key: key, sender: transfer.peer, swarmID: swarm.swarmID, members: swarm.members, me: me,
            chunkSize: Int(chunk), sizes: transfer.files.map(\.size), fetcher: fetcher)
        incoming[key]?.swarmID = swarm.swarmID
        startProgressChecks(swarm.swarmID)
        let others = Set(swarm.members.enumerated().filter { $0.offset != me }.map(\.element.deviceID))
        let token = await session.vouch(
            for: others, reason: "broadcast \(swarm.swarmID) from \(transfer.peer.displayName)")
        // Ended while the vouch was given (and perhaps a later swarm took the ID): the vouch is not this swarm's.
        if let joined = memberSwarms[swarm.swarmID], joined.key == key, joined.vouch == nil, !joined.fetcher.hasLeft {
            memberSwarms[swarm.swarmID]?.vouch = token
        } else {
            session.revoke(token)
        }
        log(1, "transfer \(key.transferID): member \(me) of swarm \(swarm.swarmID) (\(swarm.members.count) members)")
    }

    /// The transfer with the sender ended with every file published: this member holds every chunk and stays in the
    /// swarm to serve the others (PROTOCOL.md 11.11 rule 6) until the sender's list leaves it out or its link to the
    /// sender is lost. Returns the bytes relayed each way so far, for the outcome.
    func lingerInSwarm(_ swarmID: SwarmID) -> (relayed: UInt64, served: UInt64) {
        guard let swarm = memberSwarms[swarmID] else { return (0, 0) }
        // The sender's list left this member out before its transfer ended here (the last list can overtake the
        // end): there is nobody to serve, and no later list would end the swarm here.
        if swarm.fetcher.hasLeft { return leaveSwarm(swarmID) }
        memberSwarms[swarmID]?.done = true
        for timer in swarm.timers.values { timer.cancel() }
        memberSwarms[swarmID]?.timers = [:]
        swarm.progressTimer?.cancel()
        memberSwarms[swarmID]?.progressTimer = nil
        log(1, "swarm \(swarmID): every file is here; serving the other members while the sender keeps this one listed")
        return (swarm.relayedBytes, swarm.servedBytes)
    }

    /// The transfer with the sender ended (or, for a member that only serves, the sender's list left it out or its
    /// link went): the swarm ends here. Requests stop, the vouch is taken back, the swarm links close (other members
    /// fetch elsewhere). Returns the bytes relayed each way, for the outcome.
    ///
    /// A member that served on after its transfer ended (`lingerInSwarm`) had only a part of that in the transfer's
    /// outcome: its totals go out as `TransferEvent.swarmEnded` (also when the engine stops: `receive --once`).
    @discardableResult
    func leaveSwarm(_ swarmID: SwarmID) -> (relayed: UInt64, served: UInt64) {
        guard let swarm = memberSwarms.leave(swarmID) else { return (0, 0) }
        if swarm.done {
            emit(
                .swarmEnded(
                    SwarmTotals(
                        transferID: swarm.key.transferID, sender: swarm.sender, relayedBytes: swarm.relayedBytes,
                        servedBytes: swarm.servedBytes)))
        }
        for timer in swarm.timers.values { timer.cancel() }
        swarm.progressTimer?.cancel()
        for waiter in swarm.roomWaiters.values { waiter.cancel() }
        var readers = swarm.readers
        readers.closeAll()
        let stillUsed = Set(memberSwarms.all.values.flatMap(\.links.values))
        let links = swarm.links.values.filter { !stillUsed.contains($0) }
        let session = self.session
        // At once: no link is admitted on it once this returns.
        if let vouch = swarm.vouch { session.revoke(vouch) }
        Task {
            for peerID in links where await session.peer(peerID)?.isSwarmLink == true {
                await session.disconnect(peerID)
            }
        }
        log(
            1,
            "swarm \(swarmID) ended here: \(swarm.relayedBytes) bytes from other members, \(swarm.servedBytes) served")
        return (swarm.relayedBytes, swarm.servedBytes)
    }

    /// A file of the transfer with the sender ended here: this member's fetcher asks nothing more of it and, when it
    /// failed, serves nothing of it (what its staged file holds is not known to be its chunks).
    func swarmFileEnded(_ file: Int, published: Bool, _ key: IncomingKey) async {
        guard let swarmID = incoming[key]?.swarmID else { return }
        let actions = withMemberSwarm(swarmID) { $0.fetcher.fileEnded(file, published: published) } ?? []
        await carryOut(actions, swarmID)
    }

    /// A link was lost: a member of a swarm this side is in has its requests go elsewhere.
    func swarmPeerLost(_ peerID: PeerID) async {
        // The sender of a swarm this member only serves is gone: so is the swarm.
        for (swarmID, swarm) in memberSwarms.all where swarm.done && swarm.key.peer == peerID { leaveSwarm(swarmID) }
        for swarmID in memberSwarms.all.keys {
            guard let index = memberSwarms[swarmID]?.linkedMembers.removeValue(forKey: peerID) else { continue }
            memberSwarms[swarmID]?.links[index] = nil
            stopAnnouncing(to: index, swarmID)
            let actions = memberSwarms[swarmID]?.fetcher.linkDown(index) ?? []
            await carryOut(actions, swarmID)
        }
    }

    // MARK: From the sender

    /// The member side of a transfer with the sender, found by the frame's transfer ID; nil (and the frame dealt
    /// with) when there is none.
    private func swarmOfTransfer(_ transferID: TransferID, from peerID: PeerID, _ what: String) async -> SwarmID? {
        let key = IncomingKey(peer: peerID, transferID: transferID)
        if let swarmID = incoming[key]?.swarmID, memberSwarms[swarmID] != nil { return swarmID }
        if let serving = memberSwarms.all.first(where: { $0.value.key == key && $0.value.done }) { return serving.key }
        // Frames still in flight when the transfer ended here are dropped; otherwise the sender broke rule 1.
        if incoming.hasEnded(key) || incoming[key]?.swarmID != nil { return nil }
        await violation(by: peerID, "\(what) for a transfer that is not in a swarm with this side")
        return nil
    }

    func swarmMembersReceived(_ members: SwarmMembers, from peerID: PeerID) async {
        guard let swarmID = await swarmOfTransfer(members.transferID, from: peerID, "a swarmMembers") else { return }
        let list = members.members.map(Int.init)
        guard let count = memberSwarms[swarmID]?.members.count, list.allSatisfy({ $0 < count }) else {
            await violation(by: peerID, "a swarmMembers naming a member the offer does not list")
            return
        }
        let actions = memberSwarms[swarmID]?.fetcher.membersReceived(list) ?? []
        await carryOut(actions, swarmID)
        dialMembers(list, swarmID)
    }

    func chunkDigestsReceived(_ digests: ChunkDigests, from peerID: PeerID) async {
        guard let swarmID = await swarmOfTransfer(digests.transferID, from: peerID, "a chunkDigests") else { return }
        let entries = digests.entries.map { entry -> (seed: Int?, sha256: [UInt8]) in
            (entry.seed == ChunkDigests.noSeed ? nil : Int(entry.seed), entry.sha256)
        }
        let result: Result<[SwarmFetcher.Action], TransferProtocolError>? = withMemberSwarm(swarmID) { swarm in
            do throws(TransferProtocolError) {
                return .success(
                    try swarm.fetcher.digestsReceived(
                        file: Int(digests.fileIndex), first: Int(digests.firstChunk), entries: entries))
            } catch {
                return .failure(error)
            }
        }
        switch result {
        case .success(let actions)?: await carryOut(actions, swarmID)
        case .failure(let error)?: await violation(by: peerID, error.description)
        case nil: return
        }
    }

    // MARK: From other members

    /// The index of the member at the other end of `peerID`'s link in swarm `swarmID`, marking the link up the first
    /// time a frame comes over it; nil (and the link closed) when that peer is not a member this side may talk to.
    private func memberIndex(_ swarmID: SwarmID, _ peerID: PeerID, _ what: String) async -> Int? {
        guard let swarm = memberSwarms[swarmID] else {
            // A swarm that ended here: frames in flight are dropped. One never heard of breaks rule 1.
            if !memberSwarms.hasEnded(swarmID) {
                await violation(by: peerID, "\(what) for a swarm this side is not in")
            }
            return nil
        }
        if let index = swarm.linkedMembers[peerID] { return index }
        guard let deviceID = await session.peer(peerID)?.deviceID,
            let index = swarm.members.firstIndex(where: {
                $0.deviceID == deviceID
            }), index != swarm.me
        else {
            await violation(by: peerID, "\(what) from a peer that is not a member of swarm \(swarmID)")
            return nil
        }
        guard memberSwarms[swarmID] != nil else { return nil }
        await memberLinkUp(swarmID, index, peerID)
        return index
    }

    /// `swarmHave`: the ranges go to the fetcher as they are (never chunk by chunk), which checks that they stay inside
    /// the file and that the member is one whose announcements it keeps before it does any work for them.
    func swarmHaveReceived(_ have: SwarmHave, from peerID: PeerID) async {
        guard let index = await memberIndex(have.swarmID, peerID, "a swarmHave") else { return }
        // The wire format bounds each range below 2^32: every bound fits an Int.
        let ranges = have.ranges.map { Int($0.lowerBound)..<Int($0.upperBound) }
        let result: Result<[SwarmFetcher.Action], TransferProtocolError>? = withMemberSwarm(have.swarmID) { swarm in
            do throws(TransferProtocolError) {
                return .success(try swarm.fetcher.haveReceived(from: index, file: Int(have.fileIndex), ranges: ranges))
            } catch {
                return .failure(error)
            }
        }
        switch result {
        case .success(let actions)?: await carryOut(actions, have.swarmID)
        case .failure(let error)?: await violation(by: peerID, error.description)
        case nil: return
        }
    }

    func memberRequestReceived(_ request: SwarmRequest, from peerID: PeerID) async {
        guard let index = await memberIndex(request.swarmID, peerID, "a swarmRequest") else { return }
        let chunk = SwarmChunk(file: Int(request.fileIndex), index: Int(request.chunkIndex))
        let actions = withMemberSwarm(request.swarmID) { $0.fetcher.requestReceived(from: index, chunk) } ?? []
        await carryOut(actions, request.swarmID)
    }

    func swarmRefuseReceived(_ refuse: SwarmRefuse, from peerID: PeerID) async {
        guard let index = await memberIndex(refuse.swarmID, peerID, "a swarmRefuse") else { return }
        let chunk = SwarmChunk(file: Int(refuse.fileIndex), index: Int(refuse.chunkIndex))
        let actions =
            withMemberSwarm(refuse.swarmID) { swarm -> [SwarmFetcher.Action] in
                swarm.timers.removeValue(forKey: chunk)?.cancel()
                return swarm.fetcher.refusalReceived(from: index, chunk, reason: refuse.reason)
            } ?? []
        await carryOut(actions, refuse.swarmID)
    }

    /// A chunk whose transfer ID field is a swarm ID: relayed by another member. Checked against the sender's digest
    /// (never its own `sha256` field), stored and acknowledged `storedFromPeer`, or its relayer cut off.
    func relayedChunkReceived(_ chunk: Chunk, from peerID: PeerID) async {
        let swarmID = SwarmID(chunk.transferID)
        guard let index = await memberIndex(swarmID, peerID, "a relayed chunk"), let swarm = memberSwarms[swarmID],
            let transfer = incoming[swarm.key]
        else { return }
        let file = Int(chunk.fileIndex)
        let position = SwarmChunk(file: file, index: Int(chunk.offset / UInt64(swarm.chunkSize)))
        memberSwarms[swarmID]?.timers.removeValue(forKey: position)?.cancel()
        // Its bytes count only when they are exactly that chunk's: its place, its length, a codec asked for.
        var raw: ArraySlice<UInt8>?
        if file < transfer.files.count, chunk.offset % UInt64(swarm.chunkSize) == 0,
            Int(chunk.rawLength) == swarm.length(of: position, size: transfer.files[file].size)
        {
            switch chunk.codec {
            case .none: raw = chunk.data
            case .zlib, .zstd:
                probe.inflatedChunks += 1
                raw = try? ChunkInflater.inflate(
                    chunk.data, algorithm: chunk.codec == .zstd ? .zstd : .zlib, rawLength: Int(chunk.rawLength))[...]
            default: raw = nil
            }
        }
        let sha256 = raw.map { bytes in bytes.withUnsafeBytes { FileDigest.chunkDigest($0) } }
        let actions =
            withMemberSwarm(swarmID) { $0.fetcher.relayedChunkArrived(from: index, position, sha256: sha256) } ?? []
        await carryOut(actions, swarmID, relayed: raw.map { (position, $0) })
    }

    /// Runs `body` on a member swarm's record in place (`SwarmMemberships.with`).
    @discardableResult
    func withMemberSwarm<T>(_ swarmID: SwarmID, _ body: (inout MemberSwarm) throws -> T) rethrows -> T? {
        try memberSwarms.with(swarmID, body)
    }
}
