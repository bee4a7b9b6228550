import FerrySession
import FerryStateMachines
import FerrySystem
import FerryWire

/// The sender's side of a swarm broadcast (PROTOCOL.md 11.11): the offer's swarm section, the seeder, digests,
/// member lists, requests and reports from members. The seeding loop and the members' pumps are in
/// TransferEngine+SwarmSeeding.
extension TransferEngine {
    /// How long the sender waits for the other replies after the first accepting reply with `relay` before it sends
    /// the first `swarmMembers` without them (PROTOCOL.md 11.11): one person slow to accept does not hold up the
    /// rest; a member whose reply comes later joins the swarm then (it gets the list and the digests seeded so far).
    static let swarmReplyGrace = Duration.seconds(5)

    /// The swarm section of an offer to `peers`: every peer in order with its device ID and the address the session
    /// reached it at. Nil (a plain broadcast) with `relay` off, fewer than 2 or more than 256 peers, or two peers of
    /// one device ID.
    static func swarmSection(for peers: [PeerInfo], relay: Bool) -> Swarm? {
        guard relay, (Limits.minSwarmMembers...Limits.maxSwarmMembers).contains(peers.count),
            Set(peers.map(\.deviceID)).count == peers.count
        else { return nil }
        let members = peers.map { SwarmMember(deviceID: $0.deviceID, address: swarmAddress($0.address)) }
        return Swarm(swarmID: SwarmID.random(), members: members)
    }

    /// A member's address as the offer names it: "host:port" or "[v6%scope]:port", empty when unknown or when it
    /// does not fit 64 printable ASCII bytes.
    static func swarmAddress(_ address: SocketAddress?) -> String {
        guard let text = address?.description, text.utf8.count <= Limits.maxSwarmAddressLength,
            text.utf8.allSatisfy({ (0x21...0x7E).contains($0) })
        else { return "" }
        return text
    }

    /// Runs `body` on the operation's swarm in place (taken out of the table meanwhile, as `withPeer` does).
    @discardableResult
    func withSwarm<T>(_ id: TransferID, _ body: (inout SwarmSending) throws -> T) rethrows -> T? {
        guard var swarm = operations[id]?.swarm else { return nil }
        operations[id]?.swarm = nil
        defer { operations[id]?.swarm = swarm }
        return try body(&swarm)
    }

    /// Whether this engine sends the swarm `swarmID` and `peerID` is one of its members (a `swarmRequest` from it is
    /// for the sender).
    func isSwarmSender(_ swarmID: SwarmID, to peerID: PeerID) -> Bool {
        operations.all.contains { $0.swarm?.swarm.swarmID == swarmID && $0.swarm?.member(peerID) != nil }
    }

    /// A member's reply (after the peer's machine took it): with `relay`, before the first member list, it joins the
    /// seeder and its chunks are scheduled by the seeding loop from now on; otherwise it is served on the ordinary
    /// path. A reply with `relay` after the first list gets the list without itself (it is out).
    func swarmReplyReceived(_ reply: OfferReply, _ id: TransferID, _ peerID: PeerID) async {
        guard let member = operations[id]?.swarm?.member(peerID) else { return }
        enum Joined { case joined, late([SwarmSeeder.Action]), outside }
        let joined = withSwarm(id) { swarm -> Joined in
            let accepted = reply.files.map(\.accepted)
            let offsets = reply.files.map(\.resumeOffset)
            // The machine took the reply, so the seeder cannot refuse it (one reply, one decision per file).
            guard !swarm.repliesComplete else {
                guard reply.accepted, reply.relay,
                    let actions = try? swarm.seeder.lateReplyReceived(
                        member: member, accepted: accepted, resumeOffsets: offsets), !actions.isEmpty
                else { return .outside }
                return .late(actions)
            }
            guard reply.accepted else {
                swarm.seeder.declined(member: member)
                return .outside
            }
            guard
                (try? swarm.seeder.replyReceived(
                    member: member, relay: reply.relay, accepted: accepted, resumeOffsets: offsets)) != nil,
                swarm.seeder.role(of: member) == .active
            else { return .outside }
            if swarm.graceTimer == nil {
                swarm.graceTimer = Task { [weak self] in
                    try? await Task.sleep(for: Self.swarmReplyGrace)
                    guard !Task.isCancelled else { return }
                    await self?.checkSwarmReplies(id, stopWaiting: true)
                }
            }
            return .joined
        }
        switch joined {
        case .joined?, .late?:
            // From now on the seeding loop schedules its chunks; files it holds whole (resumed) may end at once.
            let held = operations[id]?.swarm.map { swarm in
                swarm.seeder.chunkCounts.indices.filter {
                    swarm.seeder.takes(member, file: $0) && swarm.seeder.holdsAll(member, of: $0)
                }
            }
            withPeer(id, peerID) { peer in
                peer.machine.scheduleExternally()
                for file in held ?? [] { peer.machine.fileHeld(file: file) }
            }
            if case .late(let actions)? = joined {
                // It joins now: the new list to everyone, the digests seeded so far to it; it catches up from the
                // other members.
                log(1, "transfer \(id): \(peerID) replied after the swarm started: it joins now")
                await perform(actions, id)
            }
        case .outside?, nil:
            break
        }
        await checkSwarmReplies(id)
    }

    /// Sends the first member list once every reply is in (or, with `stopWaiting`, the wait is over).
    func checkSwarmReplies(_ id: TransferID, stopWaiting: Bool = false) async {
        let actions = withSwarm(id) { swarm -> [SwarmSeeder.Action]? in
            guard !swarm.repliesComplete else { return nil }
            let pending = swarm.members.indices.contains { swarm.seeder.role(of: $0) == .pending }
            guard !pending || stopWaiting else { return nil }
            swarm.repliesComplete = true
            swarm.graceTimer?.cancel()
            swarm.graceTimer = nil
            return swarm.seeder.repliesComplete()
        }
        guard let actions = actions ?? nil else { return }
        log(1, "transfer \(id): swarm of \(operations[id]?.swarm?.seeder.activeMembers.count ?? 0) members")
        await perform(actions, id)
        wakeSwarm(id)
    }

    /// An acknowledgement from a member whose chunks the seeding loop schedules; false when the peer is not one (the
    /// ordinary path takes the acknowledgement).
    func swarmAckReceived(_ ack: ChunkAck, from peerID: PeerID) async -> Bool {
        let id = ack.transferID
        let file = Int(ack.fileIndex)
        guard let member = operations[id]?.swarm?.member(peerID),
            let state = withPeer(
                id, peerID,
                { peer in
                    (
                        external: peer.machine.isScheduledExternally, chunkSize: UInt64(peer.machine.chunkSize),
                        // Acknowledgements still in flight when the transfer, or the file, ended here are harmless.
                        late: peer.machine.phase == .finished
                            || (file < peer.machine.fileCount && peer.machine.result(of: file) != nil)
                    )
                }), state.external
        else { return false }
        if state.late { return true }
        guard let counts = operations[id]?.swarm?.seeder.chunkCounts, file < counts.count,
            ack.offset % state.chunkSize == 0, ack.offset / state.chunkSize < counts[file]
        else {
            await violation(
                by: peerID,
                "an acknowledgement of a chunk that is not in the offer (file \(file), offset \(ack.offset))")
            return true
        }
        let chunk = SwarmChunk(file: file, index: Int(ack.offset / state.chunkSize))
        typealias Taken = (actions: [SwarmSeeder.Action], newBytes: Int, holdsAll: Bool)
        let taken = withSwarm(id) { swarm -> Result<Taken, TransferProtocolError> in
            let had = swarm.seeder.holds(member, chunk)
            if ack.status == .corrupt {
                let copies = swarm.corrupt[member, default: [:]][chunk, default: 0] + 1
                swarm.corrupt[member, default: [:]][chunk] = copies
                guard copies <= IncomingTransferMachine.maxCorruptCopies else {
                    return .failure(
                        TransferProtocolError(
                            "more than \(IncomingTransferMachine.maxCorruptCopies) corrupt acknowledgements of \(chunk)"
                        ))
                }
            } else {
                swarm.corrupt[member]?[chunk] = nil
            }
            do throws(TransferProtocolError) {
                let actions = try swarm.seeder.ackReceived(member: member, chunk: chunk, status: ack.status)
                let fresh = !had && swarm.seeder.holds(member, chunk)
                return .success(
                    (actions, fresh ? swarm.seeder.length(of: chunk) : 0, swarm.seeder.holdsAll(member, of: file)))
            } catch {
                return .failure(error)
            }
        }
        switch taken {
        case .failure(let error)?:
            await violation(by: peerID, error.description)
            return true
        case .success(let taken)?:
            withPeer(id, peerID) { peer in
                peer.bytesDone += UInt64(taken.newBytes)
                peer.fileBytesDone[file] += UInt64(taken.newBytes)
                if ack.status == .storedFromPeer { peer.relayedBytes += UInt64(taken.newBytes) }
                if taken.holdsAll { peer.machine.fileHeld(file: file) }
            }
            if ack.status == .corrupt {
                log(1, "peer \(peerID) received a corrupt chunk (\(chunk)): sending it again")
                await forgetKeptDigests(file, id)
            }
            await perform(taken.actions, id)
            if taken.newBytes > 0 { reportProgress(id, peerID, file: file) }
        case nil:
            break
        }
        wake(id, peerID)
        wakeSwarm(id)
        return true
    }

    /// A swarm member's result for a file: the seeder stops counting the file's chunks for it (and seeds anew what
    /// it seeded of a file it failed).
    func swarmResultReceived(_ result: FileResult, _ id: TransferID, _ peerID: PeerID) async {
        guard let member = operations[id]?.swarm?.member(peerID),
            operations[id]?.peers[peerID]?.machine.isScheduledExternally == true
        else { return }
        let actions = withSwarm(id) {
            $0.seeder.fileEnded(member: member, file: Int(result.fileIndex), published: result.status == .published)
        }
        if let actions { await perform(actions, id) }
        wakeSwarm(id)
    }

    /// A member's transfer ended (its link lost, cancelled, failed, or every result in): it leaves the swarm; the
    /// chunks only it was to pass on are seeded anew, then the new member list goes out.
    func swarmMemberEnded(_ id: TransferID, _ peerID: PeerID) async {
        guard let member = operations[id]?.swarm?.member(peerID) else { return }
        let actions = withSwarm(id) { $0.seeder.memberLeft(member) } ?? []
        if operations[id]?.cancelled == false { await perform(actions, id) }
        await checkSwarmReplies(id)
        wakeSwarm(id)
    }

    /// A member asks the sender for a chunk (rule 6): answered after the seeds, once per chunk and member, within its
    /// window (beyond it the request waits in the seeder, as an index, until an acknowledgement makes room).
    func senderRequestReceived(_ request: SwarmRequest, from peerID: PeerID) async {
        guard
            let id = operations.first(where: {
                $0.swarm?.swarm.swarmID == request.swarmID && $0.swarm?.member(peerID) != nil
            })?.id, let member = operations[id]?.swarm?.member(peerID)
        else {
            await violation(by: peerID, "a swarmRequest for a swarm this side does not send")
            return
        }
        guard operations[id]?.peers[peerID]?.machine.phase == .sending else { return }  // ended here: in flight
        let chunk = SwarmChunk(file: Int(request.fileIndex), index: Int(request.chunkIndex))
        // A chunk of the member's resumed prefix that it asks for (its copy failed the digest): the seeder drops the
        // claim, and its bytes are sent again, so they leave what this side counts resumed and verified there.
        let answered = withSwarm(id) { swarm -> Result<Int, TransferProtocolError> in
            do throws(TransferProtocolError) {
                let held = swarm.seeder.holds(member, chunk)
                for case .send(let chunk, let member) in try swarm.seeder.requestReceived(member: member, chunk: chunk)
                {
                    swarm.answers.append((chunk, member))
                }
                return .success(held && !swarm.seeder.holds(member, chunk) ? swarm.seeder.length(of: chunk) : 0)
            } catch {
                return .failure(error)
            }
        }
        switch answered {
        case .failure(let error)?:
            await violation(by: peerID, error.description)
            return
        case .success(let dropped)? where dropped > 0:
            withPeer(id, peerID) { peer in
                let bytes = UInt64(dropped)
                peer.resumedBytes -= min(bytes, peer.resumedBytes)
                peer.fileBytesDone[chunk.file] -= min(bytes, peer.fileBytesDone[chunk.file])
                peer.prefixDropped[chunk.file, default: 0] += bytes
            }
        default:
            break
        }
        wakeSwarm(id)
    }

    /// A member reports another (rule 5): named in the events, the offender cut off and served directly.
    func swarmReportReceived(_ report: SwarmReport, from peerID: PeerID) async {
        let id = report.transferID
        guard let reporter = operations[id]?.swarm?.member(peerID) else {
            await violation(by: peerID, "a swarmReport outside any swarm")
            return
        }
        // A member whose transfer ended with every file published stays in the list and serves on (rule 6): a lie
        // told to it by an answer that came late is still news, also once its pump has finished it here (its record
        // gone from `peers`): it is still `active` in the seeder. A member that left is out: its report was in flight.
        let phase = operations[id]?.peers[peerID]?.machine.phase
        guard phase == .sending || operations[id]?.swarm?.seeder.role(of: reporter) == .active else { return }
        let chunk = SwarmChunk(file: Int(report.fileIndex), index: Int(report.chunkIndex))
        let taken = withSwarm(id) { swarm -> Result<[SwarmSeeder.Action], TransferProtocolError> in
            do throws(TransferProtocolError) {
                return .success(
                    try swarm.seeder.reportReceived(
                        from: reporter, offender: Int(report.offender), reason: report.reason, chunk: chunk))
            } catch {
                return .failure(error)
            }
        }
        switch taken {
        case .failure(let error)?: await violation(by: peerID, error.description)
        case .success(let actions)?: await perform(actions, id)
        case nil: break
        }
        wakeSwarm(id)
    }

    /// The text a person reads for a report's reason.
    static func reportText(_ reason: SwarmReportReason) -> String {
        switch reason {
        case .badChunk: "a chunk that does not match the sender's digest"
        case .protocolError: "a broken swarm rule"
        default: "\(reason)"
        }
    }
}
