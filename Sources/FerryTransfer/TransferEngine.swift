import FerrySession
import FerryStateMachines
import FerrySystem
import FerryWire

/// Moves files between the peers of a `Session`: offers, chunks, flow control, verification, publication, resume
/// and progress. One engine per session; it reads the session's `transferEvents` and reports on `events`.
///
/// Create one with `TransferEngine.run(session:configuration:) { engine in ... }` on a session whose configuration
/// has `transfersEnabled`. Sending is `send(_:to:)` (one peer, or several for a broadcast); receiving happens by
/// itself into `configuration.receiveDirectory`, offers answered by `configuration.offerPolicy`.
/// All state is touched only on this actor and kept by its roles: the sends (`OutgoingOperations`), the receive path
/// (`IncomingTransfers`), the swarm member (`SwarmMemberships`) and, in each broadcast's operation, the seeder's side
/// (`SwarmSending`); the engine routes frames to them (`handle(_:)`) and does their I/O. Each peer of a send has a
/// pump task that asks it what to send next.
public actor TransferEngine {
    /// Every event of every transfer, in order (offers, progress, file and transfer ends). Ends when the engine stops.
    public nonisolated let events: AsyncStream<TransferEvent>
    /// What the engine was created with.
    public nonisolated let configuration: TransferConfiguration
    let eventSink: AsyncStream<TransferEvent>.Continuation
    let session: Session
    let receiveDirectory: ReceiveDirectory?
    let clock = ContinuousClock()
    /// Where the receiving side's blocking work runs (staged writes, syncs, renames), in order.
    let io = BlockingIO(label: "ferry.receive-directory")
    /// Where write-behind waits for the disk and drops written pages, beside the writes on `io` (`Writeback`).
    var writeback = Writeback()
    /// Where verified files are synced and renamed into place, beside the writes of the files after them.
    let publishing = BlockingIO(label: "ferry.publish")
    /// Where accepting an offer reads back and hashes staged prefixes: apart from `io`, so that an answer never waits
    /// behind the staged writes other transfers queued there (docs/ARCHITECTURE.md, "Blocking work").
    let accepting = BlockingIO(label: "ferry.accept")
    /// Writes finished on `io`, in the order they were queued; one task carries out what waited for each.
    nonisolated let completions = AsyncChannel<WriteCompletion>()
    var completionLoop: Task<Void, Never>?
    /// The sending side: every send under way and the sends that ended recently.
    let operations = OutgoingOperations()
    /// The receive path: every incoming transfer, the asks, what each sender has queued, the held acknowledgements.
    let incoming = IncomingTransfers()
    var loop: Task<Void, Never>?
    var isStopped = false
    /// What tests count and hold (`TransferEngineProbe`): apart from the roles' state.
    var probe = TransferEngineProbe()
    /// Whether large staged files are written past the page cache where the file system allows: a behaviour of the
    /// receive path, which tests of write-behind turn off (`useDirectWrites`).
    var directWrites = true
    /// The swarm member: every swarm this side is a member of, and those that ended here recently.
    let memberSwarms = SwarmMemberships()

    /// `directory`, when given, is the receive directory opened already (tests: one that records its steps); else
    /// `configuration.receiveDirectory` is opened.
    init(session: Session, configuration: TransferConfiguration, directory: ReceiveDirectory? = nil)
        throws(TransferError)
    {
        guard session.configuration.transfersEnabled else {
            throw .receiveDirectory("the session was not created with transfersEnabled")
        }
        guard (Limits.minChunkSize...Limits.maxChunkSize).contains(configuration.chunkSize),
            configuration.window >= configuration.chunkSize
        else { throw .receiveDirectory("the chunk size must be 64 KiB to 4 MiB, and the window at least one chunk") }
        self.session = session
        self.configuration = configuration
        (events, eventSink) = AsyncStream.makeStream(of: TransferEvent.self)
        if let directory {
            receiveDirectory = directory
        } else if let path = configuration.receiveDirectory {
            do throws(SystemError) {
                receiveDirectory = try ReceiveDirectory(path: path)
            } catch {
                throw .receiveDirectory("cannot receive into \(path): \(error)")
            }
        } else {
            receiveDirectory = nil
        }
    }

    /// Runs `body` with a started engine and stops it afterwards: transfers still running are cancelled (the peers
    /// are told), files already verified are published, and `events` ends.
    public static func run<T: Sendable>(
        session: Session, configuration: TransferConfiguration, _ body: (TransferEngine) async throws -> T
    ) async throws -> T {
        try await run(session: session, configuration: configuration, directory: nil, body)
    }

    /// `run(session:configuration:_:)` receiving into `directory` (opened already) when given.
    static func run<T: Sendable>(
        session: Session, configuration: TransferConfiguration, directory: ReceiveDirectory?,
        _ body: (TransferEngine) async throws -> T
    ) async throws -> T {
        let engine = try TransferEngine(session: session, configuration: configuration, directory: directory)
        await engine.start()
        do {
            let result = try await body(engine)
            await engine.stop(reason: .shuttingDown)
            return result
        } catch {
            await engine.stop(reason: error is CancellationError ? .cancelledByUser : .shuttingDown)
            throw error
        }
    }

    func start() {
        if let directory = receiveDirectory {
            let removed = directory.removeStale(olderThan: configuration.staleAfter)
            if removed > 0 { log(1, "removed \(removed) stale staged files from \(directory.path)") }
        }
        let finished = completions
        completionLoop = Task { [weak self] in
            for await completion in finished {
                guard let self else { return }
                await self.waitWhileCompletionsHeld()
                await self.completed([completion] + finished.takeBuffered())
            }
        }
        let stream = session.transferEvents
        loop = Task { [weak self] in
            for await event in stream {
                guard let self else { return }
                await self.handle(event)
            }
        }
    }

    /// Stops like `stop(reason:)`, but keeps nothing staged for a resume: the receive directory is gone (removed,
    /// moved, unmounted), and its staging area with it. Every unfinished file of every incoming transfer ends first
    /// with a `fileResult` (`writeFailed`, `detail`), so that neither side counts it as kept (PROTOCOL.md 11.10 rule 7),
    /// then every transfer is cancelled with `detail`.
    public func stopDiscardingStaged(reason: CancelReason, detail: String) async {
        guard !isStopped else { return }
        for key in incoming.keys {
            guard let transfer = incoming[key], transfer.phase == .receiving, !transfer.isEnding else { continue }
            for file in transfer.files.indices where transfer.files[file].accepted && !transfer.files[file].ended {
                await fileFailed(file, status: .writeFailed, detail: detail, key, removeStaged: true, finishing: false)
            }
        }
        await stop(reason: reason, detail: detail)
    }

    /// Cancels every transfer still running, telling each peer why.
    public func stop(reason: CancelReason) async {
        await stop(reason: reason, detail: "")
    }

    func stop(reason: CancelReason, detail: String) async {
        guard !isStopped else { return }
        isStopped = true
        for id in operations.ids {
            await cancelOperation(id, reason: reason, detail: "")
        }
        // Every incoming transfer is stopped and its peer told first; then their outcomes, each once the writes
        // queued before it completed, or at the bound of that wait (a stalled disk never holds the stop).
        for key in incoming.keys {
            await cancelIncoming(key, reason: reason, detail: detail, tellPeer: true)
        }
        if incoming.hasEnding {
            await withCheckedContinuation { incoming.endingWaiters.append($0) }
        }
        for ask in incoming.asks.values { ask.timer.cancel() }
        incoming.asks.removeAll()
        for swarmID in memberSwarms.all.keys { leaveSwarm(swarmID) }
        for peerID in incoming.foreignPeers.keys { endForeignPeer(peerID) }
        loop?.cancel()
        completions.finish()
        eventSink.finish()
    }

    func handle(_ event: TransferLinkEvent) async {
        switch event {
        case .frame(let frame, let peerID):
            // A ferry peer claiming an ID of the foreign range would share the records of a foreign peer's.
            guard !peerID.isForeign else {
                await session.disconnect(peerID, violation: "a peer ID of the range kept for other protocols")
                return
            }
            let message: TransferMessage
            do {
                message = try TransferMessage(frame: frame)
            } catch {
                await violation(by: peerID, "\(error)")
                return
            }
            switch message {
            case .offer(let offer): await offerReceived(offer, from: peerID)
            case .offerReply(let reply): await replyReceived(reply, from: peerID)
            case .chunkAck(let ack): await ackReceived(ack, from: peerID)
            case .fileResult(let result): await resultReceived(result, from: peerID)
            case .chunk(let chunk): await chunkReceived(chunk, from: peerID)
            case .fileEnd(let end): await fileEndReceived(end, from: peerID)
            case .cancel(let cancel): await cancelReceived(cancel, from: peerID)
            // Swarm frames (PROTOCOL.md 11.11): the sender's side in TransferEngine+SwarmSending, a member's in
            // TransferEngine+SwarmMember. A swarmRequest goes to whichever side knows its swarm ID with that peer.
            case .swarmReport(let report): await swarmReportReceived(report, from: peerID)
            case .swarmRequest(let request) where isSwarmSender(request.swarmID, to: peerID):
                await senderRequestReceived(request, from: peerID)
            case .swarmRequest(let request): await memberRequestReceived(request, from: peerID)
            case .swarmMembers(let members): await swarmMembersReceived(members, from: peerID)
            case .chunkDigests(let digests): await chunkDigestsReceived(digests, from: peerID)
            case .swarmHave(let have): await swarmHaveReceived(have, from: peerID)
            case .swarmRefuse(let refuse): await swarmRefuseReceived(refuse, from: peerID)
            }
        case .peerDisconnected(let peerID, _) where peerID.isForeign:
            // A ferry link that claimed an ID of the foreign range left. It held nothing here: its frames were
            // refused (the link cut at the first one), and nothing is sent to it (`send` refuses such an ID), so it
            // has no transfer, swarm or operation to end; a foreign peer of that ID is not the one that left.
            return
        case .peerDisconnected(let peerID, let reason):
            await peerLost(peerID, reason: reason)
        }
    }

    /// A peer broke the protocol: its transfers end and its link is closed.
    func violation(by peerID: PeerID, _ detail: String) async {
        log(1, "peer \(peerID) broke the transfer protocol: \(detail)")
        if peerID.isForeign {
            // No link to cut: its transfers end, their cancels go to the adapter, and the peer is detached.
            for key in incoming.keys where key.peer == peerID {
                await cancelIncoming(key, reason: .protocolError, detail: detail, tellPeer: true, drain: false)
            }
            endForeignPeer(peerID)
            return
        }
        for id in operations.ids where operations[id]?.peers[peerID] != nil {
            await failPeer(id, peerID, "it broke the transfer protocol (\(detail))", cancel: .protocolError)
        }
        for key in incoming.keys where key.peer == peerID {
            await cancelIncoming(key, reason: .protocolError, detail: detail, tellPeer: true, drain: false)
        }
        await session.disconnect(peerID, violation: detail)
    }

    func peerLost(_ peerID: PeerID, reason: String) async {
        await swarmPeerLost(peerID)
        for id in operations.ids where operations[id]?.peers[peerID] != nil {
            await failPeer(id, peerID, "the link was lost (\(reason))", cancel: nil)
        }
        // A member that published everything stays in its swarm's list while its link is up (PROTOCOL.md 11.11
        // rule 6); its transfer is over (finished, so `failPeer` leaves it alone, or gone from `peers`), so only this
        // takes it out. Leaving twice is nothing.
        for id in operations.ids where operations[id]?.swarm?.member(peerID) != nil {
            await swarmMemberEnded(id, peerID)
        }
        for key in incoming.keys where key.peer == peerID {
            await cancelIncoming(key, reason: nil, detail: "the link was lost (\(reason))", tellPeer: false)
        }
    }

    func cancelReceived(_ cancel: TransferCancel, from peerID: PeerID) async {
        let text = cancel.detail.isEmpty ? "\(cancel.reason)" : "\(cancel.reason): \(cancel.detail)"
        if operations[cancel.transferID]?.peers[peerID] != nil {
            await failPeer(
                cancel.transferID, peerID, "the receiver cancelled (\(text))", cancel: nil,
                stop: .cancelledByPeer(cancel.reason))
        }
        let key = IncomingKey(peer: peerID, transferID: cancel.transferID)
        if incoming[key] != nil {
            await cancelIncoming(
                key, reason: nil, detail: "the sender cancelled (\(text))", tellPeer: false,
                stop: .cancelledByPeer(cancel.reason))
        }
    }

    /// Sends one transfer frame; false when the peer is gone (its transfers end through `peerLost`). `waitForRoom`:
    /// see `Session.sendTransferFrame`.
    @discardableResult
    func send(
        _ message: TransferMessage, to peerID: PeerID, discardable: TransferID? = nil, waitForRoom: Bool = true
    ) async -> Bool {
        if peerID.isForeign { return answerForeign(message, to: peerID) }
        // Acknowledgements held for this peer go first, in the same queue entry (`IncomingTransfers.hold`).
        var frames = discardable == nil ? incoming.takeHeldAcks(for: peerID) : []
        if discardable != nil { await sendHeldAcks(to: peerID) }
        if case .chunkAck = message { probe.ackEntries += 1 } else if !frames.isEmpty { probe.ackEntries += 1 }
        frames.append(message.frame.encoded())
        do {
            try await session.sendTransferFrame(
                frames, to: peerID, discardable: discardable, waitForRoom: waitForRoom)
            return true
        } catch {
            log(2, "could not send \(message.frame.kind) to \(peerID): \(error)")
            return false
        }
    }

    func emit(_ event: TransferEvent) {
        eventSink.yield(event)
    }

    func log(_ level: Int, _ message: String) {
        configuration.log?(level, message)
    }
}

/// One incoming transfer: the sending peer and the transfer ID it chose (IDs are only unique per sender).
struct IncomingKey: Hashable, Sendable {
    var peer: PeerID
    var transferID: TransferID
}

/// A write of the receiving side finished (or failed) on the I/O queue, with the actions that waited for it.
struct WriteCompletion: Sendable {
    var key: IncomingKey
    var file: Int
    /// Raw bytes the write carried (0 for a turn without a write).
    var bytes: Int
    var actions: [IncomingTransferMachine.Action]
    var failure: SystemError?
    /// The marker queued after the writes of a transfer stopped here (`cancelIncoming`): its outcome is due.
    var endsTransfer = false
}
