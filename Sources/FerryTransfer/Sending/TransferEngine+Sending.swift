import FerrySession
import FerryStateMachines
import FerrySystem
import FerryWire
import Synchronization

extension TransferEngine {
    /// Sends `files` to every peer in `peers` (connected, each running a transfer engine): one transfer, each
    /// chunk read, compressed and hashed once and fanned out; each peer has its own window, progress and result.
    /// Returns one outcome per peer when all have finished, failed or been dropped. Cancelling the calling task
    /// cancels the transfer (the peers are told; nothing partial is published).
    public func send(_ files: [SourceFile], to peers: [PeerID]) async throws -> [TransferOutcome] {
        try await send(files.map(TransferItem.file), to: peers)
    }

    /// Sends one payload (bytes in memory, with a name and a media type) to every peer in `peers`, as
    /// `send(_:to:)` sends files.
    public func send(_ payload: Payload, to peers: [PeerID]) async throws -> [TransferOutcome] {
        try await send([.payload(payload)], to: peers)
    }

    /// Sends files and payloads in one transfer (one offer, in this order) to every peer in `peers`, as
    /// `send(_:to:)` sends files. Throws `TransferError` before anything is offered when an item cannot be sent: a
    /// file that cannot be read, an invalid payload name, two items with one name, no item, more than
    /// `Limits.maxOfferFiles`.
    public func send(_ items: [TransferItem], to peers: [PeerID]) async throws -> [TransferOutcome] {
        try await send(try await prepare(items), to: peers)
    }

    /// Checks and prepares `items` for `send(_:to:)`, without any peer: each file opened, its status taken and its
    /// first bytes sniffed (and its kept digests looked up). A caller that prepares while it finds and connects its
    /// peers saves that time (`ferry send` does). The status taken here is what the offer says, and what every read
    /// during the send is checked against: a file changed after it was prepared fails as one changed during the send
    /// (`sourceChanged`). Throws `TransferError` as `send` does before anything is offered.
    ///
    /// `folders` are created at the receiver besides the files' own (the empty folders of a folder sent whole, named
    /// as its files are: the offer's folders section, PROTOCOL.md 11.3); at most `Limits.maxOfferFolders`.
    public func prepare(_ items: [TransferItem], folders: [String] = []) async throws(TransferError) -> PreparedItems {
        guard !isStopped else { throw TransferError.cancelled }
        guard !items.isEmpty else { throw TransferError.nothingToSend }
        guard items.count <= Limits.maxOfferFiles else {
            throw TransferError.tooManyFiles(items.count, limit: Limits.maxOfferFiles)
        }
        var names: [String: String] = [:]
        for item in items {
            let origin: String
            switch item {
            case .file(let file): origin = file.path
            case .payload(let payload): origin = "a payload of \(payload.data.count) bytes"
            }
            if let first = names.updateValue(origin, forKey: item.name) {
                throw TransferError.duplicateName(item.name, first: first, second: origin)
            }
        }
        let files = try await PreparedFile.prepareAll(
            items, digests: configuration.digestCache.map { ($0, configuration.chunkSize) })
        guard folders.count <= Limits.maxOfferFolders else {
            throw TransferError.tooManyFolders(folders.count, limit: Limits.maxOfferFolders)
        }
        for folder in folders where names.updateValue(folder, forKey: folder) != nil {
            throw TransferError.duplicateName(folder, first: folder, second: folder)
        }
        return PreparedItems(files: files, chunkSize: configuration.chunkSize, folders: folders)
    }

    /// Sends items prepared by `prepare(_:)`, as `send(_:to:)` sends items.
    public func send(_ items: PreparedItems, to peers: [PeerID]) async throws -> [TransferOutcome] {
        guard !isStopped else { throw TransferError.cancelled }
        var prepared = items.files
        // Kept digests depend on the chunk size: those of another engine's preparing are not used.
        if items.chunkSize != configuration.chunkSize {
            for index in prepared.indices { prepared[index].cachedDigests = nil }
        }
        var infos: [PeerInfo] = []
        var seen = Set<PeerID>()
        for peerID in peers where seen.insert(peerID).inserted {
            guard let info = await session.peer(peerID), info.state == .connected else {
                throw TransferError.notConnected(await session.displayName(for: peerID) ?? "\(peerID)")
            }
            guard await session.capabilities(of: peerID)?.contains(.transfers) == true else {
                throw TransferError.peerCannotReceive(info.displayName)
            }
            // A ferry peer whose ID is in the range kept for other protocols (an older version picks one with a
            // chance of 2^-32 per run; PROTOCOL.md, hello): its frames are refused, and an offer to that ID would
            // be handed to a foreign peer of the same ID. Refused before anything is sent.
            guard !peerID.isForeign else { throw TransferError.foreignRangePeerID(info.displayName) }
            infos.append(info)
        }
        let codecs = Self.localCodecs
        let swarm = Self.swarmSection(for: infos, relay: configuration.relay)
        // The file digests known without reading (kept chunk digests): a receiver that holds such a file already
        // answers it without its bytes (PROTOCOL.md 11.10 rule 10). Not in a swarm, whose members fetch chunks.
        var fileDigests: [Int: [UInt8]] = [:]
        if swarm == nil {
            for (index, file) in prepared.enumerated() {
                if let kept = file.cachedDigests { fileDigests[index] = FileDigest.of(chunkDigests: kept) }
            }
        }
        let offer = Offer(
            transferID: TransferID.random(), chunkSize: UInt32(configuration.chunkSize), codecs: codecs,
            files: prepared.map(\.offered), swarm: swarm, fileDigests: fileDigests, folders: items.folders,
            flags: items.flags)
        do { try offer.validate() } catch { throw TransferError.offerTooLarge("\(error)") }
        // Peers on this machine's loopback share its CPU and their link is a memory copy: compressing can only cost
        // there. `auto` sends raw to them without measuring: the level controller's rule 3 (waiting for a receiver
        // that has every byte sent) steps aside by measurement over a veth pair, but on loopback its tries still
        // cost text 10-30% against this rule on the loaded 2-core test machine (ARCHITECTURE "How hard to
        // compress").
        let local = configuration.compression == .auto && infos.allSatisfy { Self.isLoopback($0.address) }
        let policy = CompressionPolicy(
            mode: local ? .none : configuration.compression, available: [.zstd, .zlib],
            startLevel: CompressionLevelController.linkStartLevel)
        // One peer uses each chunk once (a resend reads it again); a broadcast shares chunks through the cache.
        let source = ChunkSource(
            files: prepared, chunkSize: configuration.chunkSize, policy: policy,
            cacheLimit: infos.count > 1 ? 24 << 20 : 0, digestCache: configuration.digestCache, log: configuration.log)
        let now = clock.now
        let operation = OutgoingOperation(offer: offer, files: prepared, source: source, peers: [:])
        for info in infos {
            operation.peers[info.peerID] = OutgoingPeer(
                info: info,
                machine: OutgoingTransferMachine(
                    sizes: prepared.map(\.offered.size), chunkSize: configuration.chunkSize,
                    window: Self.window(configuration, compressing: policy.mode == .auto, peers: infos.count)),
                meter: ProgressMeter(interval: configuration.progressInterval), started: now,
                fileBytesDone: Array(repeating: 0, count: prepared.count))
        }
        operation.swarm = swarm.map { swarm in
            SwarmSending(
                swarm: swarm,
                seeder: SwarmSeeder(
                    memberCount: infos.count, sizes: prepared.map(\.offered.size), chunkSize: configuration.chunkSize,
                    window: configuration.window),
                members: infos.map(\.peerID), names: infos.map(\.displayName))
        }
        let id = offer.transferID
        guard !isStopped else { throw TransferError.cancelled }  // stopped while the peers were looked up
        operations[id] = operation
        log(1, "offering \(prepared.count) files to \(infos.map(\.displayName).joined(separator: ", ")) (\(id))")
        for info in infos where !(await send(.offer(offer), to: info.peerID)) {
            await failPeer(id, info.peerID, "the offer could not be sent", cancel: nil)
        }
        // The cancel of a send cancelled by its caller (Ctrl-C) runs in a task of its own; the send waits for it before
        // returning. Else a pump could end the peer the cancel had just stopped (`failPeer` stops the machine, then
        // awaits the session to queue the cancel), the send return, and the caller close the session: a goodbye with
        // no cancel before it, and the receiver reporting a lost link (CI saw it once).
        let canceller = Mutex<Task<Void, Never>?>(nil)
        let outcomes = await withTaskCancellationHandler {
            await withTaskGroup(of: TransferOutcome?.self) { group in
                for info in infos {
                    group.addTask { await self.pump(id, info.peerID) }
                }
                if swarm != nil {
                    group.addTask {
                        await self.seedLoop(id)
                        return nil
                    }
                }
                var outcomes: [TransferOutcome] = []
                for await outcome in group {
                    if let outcome { outcomes.append(outcome) }
                }
                return outcomes
            }
        } onCancel: {
            canceller.withLock { $0 = Task { await self.cancelOperation(id, reason: .cancelledByUser, detail: "") } }
        }
        if let cancelling = canceller.withLock({ $0 }) { await cancelling.value }
        await source.close()
        operations[id]?.swarm?.graceTimer?.cancel()
        if let swarm = operations[id]?.swarm {
            // The broadcast is over: members that stayed in the list to serve the others (they published every
            // file) get an empty list, and so leave the swarm (PROTOCOL.md 11.11 rule 6).
            let over = TransferMessage.swarmMembers(SwarmMembers(transferID: id, members: []))
            for (member, peerID) in swarm.members.enumerated() where swarm.seeder.role(of: member) == .active {
                await send(over, to: peerID)
            }
        }
        removeOperation(id)
        if Task.isCancelled { throw CancellationError() }
        return infos.compactMap { info in outcomes.first { $0.peer.peerID == info.peerID } }
    }

    /// Runs `body` on the peer's record in place (`OutgoingOperations.withPeer`).
    @discardableResult
    func withPeer<T>(_ id: TransferID, _ peerID: PeerID, _ body: (inout OutgoingPeer) throws -> T) rethrows -> T? {
        try operations.withPeer(id, peerID, body)
    }

    /// The loop of one peer: asks the machine what to do, does it, until the transfer with that peer is over.
    ///
    /// It times each cycle from asking for one chunk to asking for the next, and the part of it spent waiting for
    /// the link (the window full, the link writer above its high-water mark): the compression policy's pace.
    func pump(_ id: TransferID, _ peerID: PeerID) async -> TransferOutcome? {
        var cycleStarted: ContinuousClock.Instant?
        var waited = Duration.zero
        var receiverWaited = Duration.zero
        var inFlight = 0
        // The chunk frame sent last to this peer: a chunk may be compressed with its file's previous chunk as prefix
        // only when that chunk went just before it (PROTOCOL.md 11.10 rule 3).
        var previousChunk: (file: Int, offset: UInt64)?
        // One-chunk files' frames held to go to the session together (`SmallFileFrames`).
        var held = SmallFileFrames()
        while true {
            // A member of a swarm: the seeding loop schedules its chunks from its reply on.
            if withPeer(id, peerID, { $0.machine.isScheduledExternally }) == true {
                guard await handOver(&held, id, peerID) != nil else { continue }
                return await swarmPump(id, peerID)
            }
            guard let source = operations[id]?.source, let step = withPeer(id, peerID, { $0.machine.nextStep() })
            else { return nil }
            if !held.isEmpty, !step.sendsChunk {
                guard let wait = await handOver(&held, id, peerID) else { continue }
                waited += wait
            }
            switch step {
            case .finished:
                return finishPeer(id, peerID)
            case .wait:
                let sending = withPeer(id, peerID) { $0.machine.phase == .sending } ?? false
                // The chunk source may prepare further ahead while the window is full (`ChunkSource+Ahead`).
                if sending { await source.extendAhead() }
                let limitedBefore = sending ? await session.receiveWindowLimitedSeconds(to: peerID) : nil
                // The question above let other work run on this actor: an acknowledgement or result that came
                // meanwhile woke nobody (no waiter yet). Look again before waiting, or that news is lost for good
                // (a sender hung at its last result: ManySendersTests under the full suite's load).
                if sending, withPeer(id, peerID, { $0.machine.nextStep() }) != .wait { continue }
                let started = clock.now
                await waitForNews(id, peerID)
                if sending {
                    let wait = clock.now - started
                    waited += wait
                    // The wait was for the receiving process, not the link (the level controller's rule 3), when
                    // nothing was left unacknowledged on the link as the window opened (all had crossed it), or the
                    // peer's receive window held the link back for most of it (its socket buffer full).
                    let queued = await session.unacknowledgedBytes(to: peerID)
                    let limited = await session.receiveWindowLimitedSeconds(to: peerID)
                    var heldBack = false
                    if let before = limitedBefore, let after = limited {
                        heldBack =
                            after - before >= CompressionLevelController.receiveWindowShare * ChunkSource.seconds(wait)
                    }
                    if queued.map({ $0 < CompressionLevelController.linkQueueBytes }) == true || heldBack {
                        receiverWaited += wait
                    }
                }
            case .sendChunk(let file, let offset, let length):
                if !hasPeerRoom(for: length, id, peerID) {  // other transfers to this peer hold the room
                    guard let wait = await handOver(&held, id, peerID) else { continue }
                    waited += wait
                    waited += await waitForPeerRoom(id, peerID)
                    continue
                }
                let prefixed = withPeer(id, peerID) { peer -> Bool in
                    peer.machine.chunkSent(file: file, offset: offset, length: length)
                    return peer.codecs.contains(.zstdPrefixed)
                        && previousChunk.map { $0.file == file && $0.offset + UInt64(peer.machine.chunkSize) == offset }
                            == true
                }
                previousChunk = nil  // until this one is sent
                let now = clock.now
                let cycle = cycleStarted.map { started in
                    PumpCycle(
                        seconds: ChunkSource.seconds(now - started), waitedSeconds: ChunkSource.seconds(waited),
                        inFlightBytes: inFlight, receiverWaitedSeconds: ChunkSource.seconds(receiverWaited))
                }
                cycleStarted = now
                waited = .zero
                receiverWaited = .zero
                await waitAtChunkGate(file: file, id)
                let prepared: ChunkSource.Prepared
                do {
                    prepared = try await source.chunk(
                        file: file, offset: offset, length: length, cycle: cycle, prefixAllowed: prefixed == true)
                } catch .changed {
                    await abandon(file, id, peerID, await source.failureText(of: file))
                    continue
                } catch {
                    await cancelOperation(id, reason: .readFailed, detail: error.description)
                    continue
                }
                // Stopped while the chunk was prepared: nothing more goes out.
                guard let codecs = withPeer(id, peerID, { $0.machine.phase == .sending ? $0.codecs : nil }) ?? nil
                else { continue }
                let data = Self.sendable(prepared, codecs: codecs)
                let header = Chunk.frameHeader(
                    transferID: id, fileIndex: UInt32(file), offset: offset, rawLength: UInt32(prepared.rawLength),
                    codec: data.codec, sha256: prepared.sha256, dataLength: data.bytes.count)
                var blocks = [header, data.bytes]
                // The chunk that completes a file takes the file's `fileEnd` along in the same queue entry (its
                // digest is known: the chunk finished the first pass): one trip to the session and one wake of
                // the link writer per small file instead of two, and no trip to the chunk source for the digest.
                var endsFile = false
                if let fileDigest = prepared.fileDigest, endsFileWithChunk(file, digest: fileDigest, id, peerID) {
                    let end = FileEnd(transferID: id, fileIndex: UInt32(file), digest: fileDigest)
                    blocks.append(TransferMessage.fileEnd(end).frame.encoded())
                    endsFile = true
                }
                // A whole file in one chunk is held while more chunks follow at once (`SmallFileFrames`).
                if endsFile, offset == 0, held.holds(dataLength: data.bytes.count) {
                    held.add(blocks, dataLength: data.bytes.count)
                    previousChunk = (file, offset)
                    withPeer(id, peerID) { peer in
                        peer.wireBytes += UInt64(data.bytes.count)
                        peer.chunkBytes += UInt64(prepared.rawLength)
                        inFlight = peer.machine.inFlightBytes
                    }
                    if !held.isFull, withPeer(id, peerID, { $0.machine.nextStep() })?.sendsChunk == true { continue }
                    if let wait = await handOver(&held, id, peerID) { waited += wait }
                    continue
                }
                if !held.isEmpty {
                    guard let wait = await handOver(&held, id, peerID) else { continue }
                    waited += wait
                }
                let queued = clock.now
                do {
                    probe.linkEntries += 1
                    _ = try await session.sendTransferFrame(blocks, to: peerID, discardable: id)
                    waited += clock.now - queued
                    previousChunk = (file, offset)
                } catch is CancellationError {
                    // The user cancelled while the link was backlogged: the receiver is still told.
                    await failPeer(id, peerID, "\(CancelReason.cancelledByUser)", cancel: .cancelledByUser, detail: "")
                    continue
                } catch {
                    await failPeer(id, peerID, "the link failed (\(error))", cancel: nil)
                    continue
                }
                withPeer(id, peerID) { peer in
                    peer.wireBytes += UInt64(data.bytes.count)
                    peer.chunkBytes += UInt64(prepared.rawLength)
                    inFlight = peer.machine.inFlightBytes
                }
            case .sendFileEnd(let file):
                await sendFileEnd(file, id, peerID, source: source, inSwarm: false)
            }
        }
    }

    /// Hands the frames `held` to the session in one queue entry; returns how long that waited for room in the link's
    /// queue, or nil when the link failed or the user cancelled meanwhile (the peer is failed then, as for a chunk
    /// sent alone). Frames held for a peer no longer being sent to (the transfer was cancelled or failed while the
    /// next chunk was prepared) are dropped, as a chunk prepared then is: nothing more goes out.
    func handOver(_ held: inout SmallFileFrames, _ id: TransferID, _ peerID: PeerID) async -> Duration? {
        guard !held.isEmpty else { return .zero }
        let blocks = held.take()
        guard withPeer(id, peerID, { $0.machine.phase == .sending }) == true else { return .zero }
        let queued = clock.now
        do {
            probe.linkEntries += 1
            _ = try await session.sendTransferFrame(blocks, to: peerID, discardable: id)
            return clock.now - queued
        } catch is CancellationError {
            await failPeer(id, peerID, "\(CancelReason.cancelledByUser)", cancel: .cancelledByUser, detail: "")
        } catch {
            await failPeer(id, peerID, "the link failed (\(error))", cancel: nil)
        }
        return nil
    }

    /// Whether the machine's next step after the chunk just taken is the `fileEnd` of `file`; if so it counts as
    /// sent (it goes out with the chunk, exactly once: a file sent again after a corrupt acknowledgement gets no
    /// second one, PROTOCOL.md 11.10 rule 5).
    func endsFileWithChunk(_ file: Int, digest: [UInt8], _ id: TransferID, _ peerID: PeerID) -> Bool {
        withPeer(id, peerID) { peer -> Bool in
            guard peer.machine.phase == .sending, peer.machine.nextStep() == .sendFileEnd(file: file) else {
                return false
            }
            peer.machine.fileEndSent(file: file)
            peer.sentDigests[file] = digest
            return true
        } ?? false
    }

    /// Records the digest sent in `file`'s `fileEnd` to this peer; false when the transfer with it has stopped.
    func recordSentDigest(_ digest: [UInt8], of file: Int, _ id: TransferID, _ peerID: PeerID) -> Bool {
        withPeer(id, peerID) { peer -> Bool in
            guard peer.machine.phase == .sending else { return false }
            peer.sentDigests[file] = digest
            return true
        } ?? false
    }

    /// The file changed while it was being sent: nothing more of it goes to this peer, which is told with `fileResult`
    /// `sourceChanged` instead of a `fileEnd` (whose digest would verify what was read: a splice of old and new
    /// bytes), and publishes nothing of it (PROTOCOL.md 11.10 rule 9). The other files go on; the file is reported
    /// failed with `text` once the receiver's result for it comes.
    func abandon(_ file: Int, _ id: TransferID, _ peerID: PeerID, _ text: String) async {
        let abandoned = withPeer(id, peerID) { peer -> Bool in
            guard peer.machine.phase == .sending, peer.machine.result(of: file) == nil, peer.abandoned[file] == nil
            else { return false }
            peer.machine.fileAbandoned(file: file)
            peer.abandoned[file] = text
            return true
        }
        guard abandoned == true, let name = operations[id]?.offer.files[file].path else { return }
        log(1, "transfer \(id): \(text)")
        let result = FileResult(
            transferID: id, fileIndex: UInt32(file), status: .sourceChanged,
            detail: Self.detail("\(name) changed while it was being sent"))
        if !(await send(.fileResult(result), to: peerID)) {
            await failPeer(id, peerID, "the link failed", cancel: nil)
        }
    }

    /// Ends the transfer with one peer. `cancel` says whether (and why) the peer is told; `detail` is what it is
    /// told beyond the reason (by default the failure text). `stop` says how it stopped, for the outcome: by default
    /// cancelled here with `cancel`'s reason, or the link lost when the peer is not told.
    func failPeer(
        _ id: TransferID, _ peerID: PeerID, _ failure: String, cancel reason: CancelReason?, detail: String? = nil,
        stop: TransferStop? = nil
    ) async {
        // A transfer that already ran to its end (every result in, or denied) is not failed by a later event,
        // such as the receiver closing its link right after its last result.
        let failed = withPeer(id, peerID) { peer -> Bool in
            guard peer.machine.phase != .finished else { return false }
            if peer.failure == nil { peer.stop = stop ?? reason.map(TransferStop.cancelledHere) ?? .linkLost }
            peer.failure = peer.failure ?? failure
            peer.machine.stop()
            return true
        }
        guard failed == true else { return }
        // Its chunks still queued would only delay the cancel (and a goodbye behind it) by megabytes.
        let dropped = await session.discardQueuedFrames(of: id, to: peerID)
        if dropped > 0 { log(2, "transfer \(id): \(dropped) queued bytes for \(peerID) dropped") }
        if let reason {
            let cancel = TransferCancel(transferID: id, reason: reason, detail: Self.detail(detail ?? failure))
            // Queued without waiting for room: a cancel never waits behind a link that stopped reading.
            let queued = await send(.cancel(cancel), to: peerID, waitForRoom: false)
            log(1, "transfer \(id) to \(peerID) failed: \(failure); its cancel \(queued ? "queued" : "not sent")")
        } else {
            log(1, "transfer \(id) to \(peerID) failed: \(failure); no cancel")
        }
        wake(id, peerID)
        await swarmMemberEnded(id, peerID)
    }

    /// Cancels a whole send: every peer still in it is told why.
    func cancelOperation(_ id: TransferID, reason: CancelReason, detail: String) async {
        guard let peers = operations[id]?.peers.keys else { return }
        operations[id]?.cancelled = true
        let text = detail.isEmpty ? "\(reason)" : detail
        for peerID in peers {
            await failPeer(id, peerID, text, cancel: reason, detail: detail)
        }
    }

    func reportProgress(_ id: TransferID, _ peerID: PeerID, file: Int) {
        let now = clock.now
        guard let offered = operations[id]?.offer.files[file],
            let progress = withPeer(id, peerID, { peer -> TransferProgress? in
                let done = peer.bytesDone + peer.resumedBytes
                guard peer.meter.record(bytes: done, now: now) else { return nil }
                let total = peer.acceptedBytes
                return TransferProgress(
                    transferID: id, peer: peer.info, direction: .sending, fileIndex: file, fileName: offered.path,
                    fileBytesDone: peer.fileBytesDone[file], fileSize: offered.size, bytesDone: done,
                    totalBytes: total, filesDone: peer.filesSucceeded + peer.filesFailed,
                    fileCount: peer.acceptedFiles, rate: peer.meter.rate,
                    secondsLeft: peer.meter.secondsLeft(remaining: total - min(done, total)))
            }) ?? nil
        else { return }
        emit(.progress(progress))
    }

    /// The peer's transfer is over: its outcome, reported once.
    func finishPeer(_ id: TransferID, _ peerID: PeerID) -> TransferOutcome? {
        guard let peer = operations.finish(id, peerID) else { return nil }
        let count = peer.machine.fileCount
        let skipped = peer.deniedReason != nil ? count : count - peer.acceptedFiles
        let unfinished = (0..<count).filter { peer.machine.isAccepted($0) && peer.machine.result(of: $0) == nil }
        var outcome = TransferOutcome(
            transferID: id, peer: peer.info, direction: .sending, filesSucceeded: peer.filesSucceeded,
            filesFailed: peer.filesFailed + unfinished.count, filesSkipped: skipped, bytes: peer.bytesDone,
            wireBytes: peer.wireBytes, chunkBytes: peer.chunkBytes, resumedBytes: peer.resumedBytes,
            duration: clock.now - peer.started,
            failure: peer.failure ?? peer.deniedReason.map { "the offer was denied (\($0))" },
            filesAlreadyThere: peer.filesAlreadyThere,
            deniedReason: peer.failure == nil ? peer.deniedReason : nil, relayedBytes: peer.relayedBytes)
        outcome.acceptedBytes = peer.acceptedBytes
        outcome.alreadyThereBytes = peer.alreadyThereBytes
        // What the receiver verified of the files that did not end (resumed prefixes included): kept staged there.
        outcome.keptBytes = peer.stop == nil ? 0 : unfinished.reduce(0) { $0 + peer.fileBytesDone[$1] }
        outcome.stop = peer.stop
        if let swarm = operations[id]?.swarm, let member = swarm.member(peerID) {
            outcome.peakInFlightBytes = swarm.seeder.peakInFlightBytes(of: member)
        }
        // The offer's folders went with an offer accepted (the receiver creates them as it accepts).
        if peer.deniedReason == nil, peer.failure == nil {
            outcome.emptyFolders = operations[id]?.offer.folders.count ?? 0
        }
        emit(.finished(outcome))
        log(1, "transfer \(id) to \(peer.info.displayName) finished: \(outcome.failure ?? "ok")")
        return outcome
    }
}
