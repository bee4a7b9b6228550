import FerrySession
import FerryStateMachines
import FerryWire

/// A swarm member played frame by frame on its link to the sender (PROTOCOL.md 11.11): it replies with `relay`,
/// acknowledges every chunk the sender sends it, pretends to fetch chunks from other members by acknowledging
/// `storedFromPeer` for chunks whose digest names another member as seed, answers each `fileEnd` with `published`,
/// and records everything the sender put on its link. No engine of its own: the sender's side is tested alone.
struct FakeSwarmMember: Sendable {
    /// How this member behaves.
    struct Behaviour: Sendable {
        /// Reply with the relay flag.
        var relay = true
        /// Acknowledge `storedFromPeer` at once for a chunk whose digest names this seed (while both are in the list).
        var relaysFrom: @Sendable (Int) -> Bool = { _ in true }
        /// Close the link, without a word, after this many chunks from the sender (none acknowledged from then on).
        var vanishAfterChunks: Int? = nil
        /// Ask the sender (`swarmRequest`) for each chunk it does not relay.
        var requestsFromSender = false
        /// Reply only once this other member got its first `swarmMembers` (a reply after the swarm started).
        var replyAfterListOf: Record? = nil
        /// Acknowledge the first chunk from the sender `corrupt` (the sender must send that chunk again, only it).
        var corruptFirstChunk = false
        /// With its first chunk, also acknowledge `storedFromPeer` for another chunk (a peer outside the swarm may not).
        var rogueStoredFromPeer = false
        /// Acknowledge nothing (a member that stalls).
        var silent = false
        /// Report this member (index) for the first chunk this member relays from it: a relayer that sent a bad chunk.
        var report: Int? = nil
        /// Close the link, without a word, once it answered `published` for every file (a member that completed and
        /// then went away).
        var vanishWhenDone = false
        /// Answer the last file's `fileEnd` only once a second `swarmMembers` list arrived.
        var lastResultAfterNewList = false
        /// Once it answered `published` for every file, report this member (index) for chunk 0 of file 0: a lie in
        /// an answer that came after the chunk had reached it otherwise.
        var reportOnceDone: Int? = nil
        /// With `requestsFromSender`: ask for nothing until the digest of every chunk of the offer is known, then for
        /// every chunk it lacks at once (as a member whose requests to every seed timed out together).
        var requestsAllAtOnce = false
        /// Reply with file 0 resumed after its first chunk, then, once that chunk's digest comes, ask the sender for
        /// it (its staged copy failed the digest, PROTOCOL.md 11.11 rule 4).
        var refetchesResumedChunk = false
    }

    /// What the sender sent on this link, in order.
    actor Record {
        var offer: Offer?
        /// (file, chunk index) of every chunk the sender sent.
        var chunks: [SwarmChunk] = []
        /// Every digest entry: chunk and seed.
        var digests: [(chunk: SwarmChunk, seed: Int)] = []
        /// Every `swarmMembers` list.
        var lists: [[Int]] = []
        var fileEnds: [Int] = []
        var vanished = false

        var cancels = 0

        func took(_ offer: Offer) { self.offer = offer }
        func got(_ chunk: SwarmChunk, seed: Int) { digests.append((chunk, seed)) }
        func ended(_ file: Int) { fileEnds.append(file) }

        /// What a test waits for.
        enum Event { case list, secondList, chunk, cancel }
        private var waiters: [Int: (event: Event, continuation: CheckedContinuation<Void, Never>)] = [:]
        private var nextWaiter = 0

        func got(_ list: [Int]) {
            lists.append(list)
            notify()
        }
        func got(_ chunk: SwarmChunk) {
            chunks.append(chunk)
            notify()
        }
        func cancelled() {
            cancels += 1
            notify()
        }

        private func happened(_ event: Event) -> Bool {
            switch event {
            case .list: !lists.isEmpty
            case .secondList: lists.count >= 2
            case .chunk: !chunks.isEmpty
            case .cancel: cancels > 0
            }
        }

        /// Returns once `event` happened, or when the waiting task is cancelled (a test past its time limit ends
        /// instead of hanging).
        func wait(for event: Event) async {
            let token = nextWaiter
            nextWaiter += 1
            await withTaskCancellationHandler {
                await withCheckedContinuation { continuation in
                    if happened(event) || Task.isCancelled {
                        continuation.resume()
                    } else {
                        waiters[token] = (event, continuation)
                    }
                }
            } onCancel: {
                Task { await self.release(token) }
            }
        }

        private func release(_ token: Int) { waiters.removeValue(forKey: token)?.continuation.resume() }

        private func notify() {
            for (token, waiter) in waiters where happened(waiter.event) {
                waiters[token] = nil
                waiter.continuation.resume()
            }
        }
        func vanish() { vanished = true }
    }

    let session: Session
    let behaviour: Behaviour
    var record = Record()

    /// Plays the member until the link closes (or the session's stream ends).
    func run() async throws {
        var me: Int?
        var transferID: TransferID?
        var chunkSize = 1
        var held = Set<SwarmChunk>()
        var list: [Int] = []
        var reported = false
        var received = 0
        /// Requests held back until every digest is known (`requestsAllAtOnce`), and the digests known.
        var heldBack: [SwarmRequest] = []
        var digestsKnown = Set<SwarmChunk>()
        func send(_ message: TransferMessage, to peer: PeerID) async -> Bool {
            (try? await session.sendTransferFrame([message.frame.encoded()], to: peer)) != nil
        }
        for await event in session.transferEvents {
            guard case .frame(let frame, let sender) = event, let message = try? TransferMessage(frame: frame) else {
                if case .peerDisconnected = event { return }
                continue
            }
            switch message {
            case .offer(let offer):
                await record.took(offer)
                transferID = offer.transferID
                chunkSize = Int(offer.chunkSize)
                let myID = session.configuration.deviceID
                me = offer.swarm?.index(of: myID)
                if let other = behaviour.replyAfterListOf { await other.wait(for: .list) }
                let reply = OfferReply.accepting(
                    offer.transferID, codecs: offer.codecs,
                    files: offer.files.enumerated().map { index, file in
                        let resumed = behaviour.refetchesResumedChunk && index == 0 && file.size > UInt64(chunkSize)
                        if resumed { held.insert(SwarmChunk(file: 0, index: 0)) }
                        return FileDecision(accepted: true, resumeOffset: resumed ? UInt64(chunkSize) : 0)
                    },
                    relay: behaviour.relay && me != nil)
                guard await send(.offerReply(reply), to: sender) else { return }
            case .chunk(let chunk) where chunk.transferID == transferID:
                let swarmChunk = SwarmChunk(file: Int(chunk.fileIndex), index: Int(chunk.offset) / chunkSize)
                await record.got(swarmChunk)
                received += 1
                if let limit = behaviour.vanishAfterChunks, received >= limit {
                    await record.vanish()
                    await session.disconnect(sender)
                    return
                }
                if behaviour.silent { continue }
                if behaviour.rogueStoredFromPeer, received == 1 {
                    let ack = ChunkAck(
                        transferID: chunk.transferID, fileIndex: chunk.fileIndex,
                        offset: chunk.offset + UInt64(chunkSize), status: .storedFromPeer)
                    guard await send(.chunkAck(ack), to: sender) else { return }
                }
                let corrupt = behaviour.corruptFirstChunk && received == 1
                if !corrupt { held.insert(swarmChunk) }
                let ack = ChunkAck(
                    transferID: chunk.transferID, fileIndex: chunk.fileIndex, offset: chunk.offset,
                    status: corrupt ? .corrupt : .stored)
                guard await send(.chunkAck(ack), to: sender) else { return }
            case .chunkDigests(let digests) where digests.transferID == transferID:
                for (offset, entry) in digests.entries.enumerated() {
                    let chunk = SwarmChunk(file: Int(digests.fileIndex), index: Int(digests.firstChunk) + offset)
                    let seed = Int(entry.seed)
                    await record.got(chunk, seed: seed)
                    digestsKnown.insert(chunk)
                    if behaviour.refetchesResumedChunk, chunk == SwarmChunk(file: 0, index: 0), held.contains(chunk),
                        let swarmID = await record.offer?.swarm?.swarmID
                    {
                        held.remove(chunk)
                        let request = SwarmRequest(swarmID: swarmID, fileIndex: 0, chunkIndex: 0, codecs: [])
                        guard await send(.swarmRequest(request), to: sender) else { return }
                        continue
                    }
                    guard !behaviour.silent, let me, seed != me, list.contains(me), list.contains(seed),
                        !held.contains(chunk)
                    else {
                        continue
                    }
                    if let offender = behaviour.report, offender == seed, !reported, let transferID {
                        reported = true
                        let report = SwarmReport(
                            transferID: transferID, offender: UInt16(seed), reason: .badChunk,
                            fileIndex: UInt32(chunk.file), chunkIndex: UInt32(chunk.index))
                        guard await send(.swarmReport(report), to: sender) else { return }
                        continue
                    }
                    guard behaviour.relaysFrom(seed), behaviour.report != seed else {
                        guard behaviour.requestsFromSender, let swarmID = await record.offer?.swarm?.swarmID else {
                            continue
                        }
                        let request = SwarmRequest(
                            swarmID: swarmID, fileIndex: UInt32(chunk.file), chunkIndex: UInt32(chunk.index), codecs: []
                        )
                        if behaviour.requestsAllAtOnce {
                            heldBack.append(request)
                            continue
                        }
                        guard await send(.swarmRequest(request), to: sender) else { return }
                        continue
                    }
                    held.insert(chunk)
                    let ack = ChunkAck(
                        transferID: transferID ?? digests.transferID, fileIndex: UInt32(chunk.file),
                        offset: UInt64(chunk.index * chunkSize), status: .storedFromPeer)
                    guard await send(.chunkAck(ack), to: sender) else { return }
                }
                let chunkCount =
                    await record.offer?.files.reduce(0) {
                        $0 + Int(($1.size + UInt64(chunkSize) - 1) / UInt64(chunkSize))
                    }
                    ?? 0
                if !heldBack.isEmpty, digestsKnown.count == chunkCount {
                    for request in heldBack {
                        guard await send(.swarmRequest(request), to: sender) else { return }
                    }
                    heldBack.removeAll()
                }
            case .swarmMembers(let members) where members.transferID == transferID:
                list = members.members.map { Int($0) }
                await record.got(list)
            case .fileEnd(let end) where end.transferID == transferID:
                await record.ended(Int(end.fileIndex))
                let path = await record.offer?.files[Int(end.fileIndex)].path ?? ""
                let last = await record.fileEnds.count == record.offer?.files.count
                let result = FileResult(
                    transferID: end.transferID, fileIndex: end.fileIndex, status: .published, detail: path)
                if behaviour.lastResultAfterNewList, last {
                    // Answered from a task of its own: this loop must go on reading to see the list.
                    let (record, session) = (self.record, self.session)
                    Task {
                        await record.wait(for: .secondList)
                        _ = try? await session.sendTransferFrame(
                            [TransferMessage.fileResult(result).frame.encoded()], to: sender)
                    }
                    continue
                }
                guard await send(.fileResult(result), to: sender) else { return }
                if let offender = behaviour.reportOnceDone, last {
                    let report = SwarmReport(
                        transferID: end.transferID, offender: UInt16(offender), reason: .badChunk, fileIndex: 0,
                        chunkIndex: 0)
                    guard await send(.swarmReport(report), to: sender) else { return }
                }
                if behaviour.vanishWhenDone, last {
                    await record.vanish()
                    await session.disconnect(sender)
                    return
                }
            case .cancel(let cancel) where cancel.transferID == transferID:
                await record.cancelled()
            default:
                continue
            }
        }
    }
}
