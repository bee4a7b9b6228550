import FerrySession
import FerryStateMachines
import FerryWire

extension TransferEngine {
    /// Sends `files` to every peer in `peers` (connected, each running a transfer engine): one transfer, each
    /// chunk read, compressed and hashed once and fanned out; each peer has its own window, progress and result.
    /// Returns one outcome per peer when all have finished, failed or been dropped. Cancelling the calling task
    /// cancels the transfer (the peers are told; nothing partial is published).
    public func send(_ files: [SourceFile], to peers: [PeerID]) async throws -> [TransferOutcome] {
        guard !isStopped else { throw TransferError.cancelled }
        let prepared = try files.map { file throws(TransferError) in try PreparedFile.prepare(file) }
        var infos: [PeerInfo] = []
        for peerID in peers {
            guard let info = await session.peer(peerID), info.state == .connected else {
                throw TransferError.notConnected(await session.displayName(for: peerID) ?? "\(peerID)")
            }
            guard await session.capabilities(of: peerID)?.contains(.transfers) == true else {
                throw TransferError.peerCannotReceive(info.displayName)
            }
            infos.append(info)
        }
        let codecs = Self.localCodecs
        let offer = Offer(
            transferID: TransferID.random(), chunkSize: UInt32(configuration.chunkSize), codecs: codecs,
            files: prepared.map(\.offered))
        let policy = CompressionPolicy(mode: configuration.compression, available: [.zstd, .zlib])
        let source = ChunkSource(files: prepared, chunkSize: configuration.chunkSize, policy: policy)
        let now = clock.now
        var operation = OutgoingOperation(offer: offer, files: prepared, source: source, peers: [:])
        for info in infos {
            operation.peers[info.peerID] = OutgoingPeer(
                info: info,
                machine: OutgoingTransferMachine(
                    sizes: prepared.map(\.offered.size), chunkSize: configuration.chunkSize,
                    window: configuration.window),
                meter: ProgressMeter(interval: configuration.progressInterval), started: now,
                fileBytesDone: Array(repeating: 0, count: prepared.count))
        }
        let id = offer.transferID
        operations[id] = operation
        log(1, "offering \(prepared.count) files to \(infos.map(\.displayName).joined(separator: ", ")) (\(id))")
        for info in infos where !(await send(.offer(offer), to: info.peerID)) {
            await failPeer(id, info.peerID, "the offer could not be sent", cancel: nil)
        }
        let outcomes = await withTaskCancellationHandler {
            await withTaskGroup(of: TransferOutcome?.self) { group in
                for info in infos {
                    group.addTask { await self.pump(id, info.peerID) }
                }
                var outcomes: [TransferOutcome] = []
                for await outcome in group {
                    if let outcome { outcomes.append(outcome) }
                }
                return outcomes
            }
        } onCancel: {
            Task { await self.cancelOperation(id, reason: .cancelledByUser, detail: "") }
        }
        await source.close()
        operations[id] = nil
        if Task.isCancelled { throw CancellationError() }
        return infos.compactMap { info in outcomes.first { $0.peer.peerID == info.peerID } }
    }

    static var localCodecs: CodecSet { [.zlib, .zstd] }

    /// The loop of one peer: asks the machine what to do, does it, until the transfer with that peer is over.
    func pump(_ id: TransferID, _ peerID: PeerID) async -> TransferOutcome? {
        while true {
            guard let operation = operations[id], var peer = operation.peers[peerID] else { return nil }
            let step = peer.machine.nextStep()
            switch step {
            case .finished:
                return finishPeer(id, peerID)
            case .wait:
                if peer.machine.phase == .sending { peer.linkBound = true }
                operations[id]?.peers[peerID] = peer
                await waitForNews(id, peerID)
            case .sendChunk(let file, let offset, let length):
                peer.machine.chunkSent(file: file, offset: offset, length: length)
                let linkBound = peer.linkBound
                peer.linkBound = false
                peer.currentFile = file
                operations[id]?.peers[peerID] = peer
                let prepared: ChunkSource.Prepared
                do {
                    prepared = try await operation.source.chunk(
                        file: file, offset: offset, length: length, linkBound: linkBound)
                } catch {
                    await cancelOperation(id, reason: .readFailed, detail: error.description)
                    continue
                }
                let header = Chunk.frameHeader(
                    transferID: id, fileIndex: UInt32(file), offset: offset, rawLength: UInt32(prepared.rawLength),
                    codec: prepared.codec, crc32: prepared.crc32, dataLength: prepared.data.count)
                let backlogged: Bool
                do {
                    backlogged = try await session.sendTransferFrame([header, prepared.data], to: peerID)
                } catch {
                    await failPeer(id, peerID, "the link failed (\(error))", cancel: nil)
                    continue
                }
                operations[id]?.peers[peerID]?.wireBytes += UInt64(prepared.data.count)
                operations[id]?.peers[peerID]?.chunkBytes += UInt64(prepared.rawLength)
                if backlogged { operations[id]?.peers[peerID]?.linkBound = true }
            case .sendFileEnd(let file):
                peer.machine.fileEndSent(file: file)
                operations[id]?.peers[peerID] = peer
                let digest: [UInt8]
                do {
                    digest = try await operation.source.digest(of: file)
                } catch {
                    await cancelOperation(id, reason: .readFailed, detail: error.description)
                    continue
                }
                let end = FileEnd(transferID: id, fileIndex: UInt32(file), sha256: digest)
                if !(await send(.fileEnd(end), to: peerID)) {
                    await failPeer(id, peerID, "the link failed", cancel: nil)
                }
            }
        }
    }

    func waitForNews(_ id: TransferID, _ peerID: PeerID) async {
        await withCheckedContinuation { (continuation: CheckedContinuation<Void, Never>) in
            guard operations[id]?.peers[peerID] != nil else {
                continuation.resume()
                return
            }
            operations[id]?.peers[peerID]?.waiter = continuation
        }
    }

    func wake(_ id: TransferID, _ peerID: PeerID) {
        let waiter = operations[id]?.peers[peerID]?.waiter
        operations[id]?.peers[peerID]?.waiter = nil
        waiter?.resume()
    }

    func replyReceived(_ reply: OfferReply, from peerID: PeerID) async {
        let id = reply.transferID
        guard var peer = operations[id]?.peers[peerID], let operation = operations[id] else {
            await violation(by: peerID, "a reply to an offer that was not made")
            return
        }
        do {
            let accepted = try peer.machine.replyReceived(reply)
            if accepted {
                peer.codecs = reply.codecs.intersection(Self.localCodecs)
                let decisions = reply.files
                peer.resumedBytes = decisions.reduce(0) { $0 + ($1.accepted ? $1.resumeOffset : 0) }
                for (index, decision) in decisions.enumerated() where decision.accepted {
                    peer.fileBytesDone[index] = decision.resumeOffset
                }
                operations[id]?.peers[peerID] = peer
                emit(
                    .started(
                        transferID: id, peer: peer.info, direction: .sending, files: operation.offer.files,
                        accepted: decisions.map(\.accepted), resumeOffsets: decisions.map(\.resumeOffset)))
            } else {
                let reason = reply.detail.isEmpty ? "\(reply.reason)" : "\(reply.reason): \(reply.detail)"
                peer.deniedReason = reason
                operations[id]?.peers[peerID] = peer
                emit(.denied(transferID: id, peer: peer.info, direction: .sending, reason: reason))
            }
        } catch {
            operations[id]?.peers[peerID] = peer
            await violation(by: peerID, error.description)
        }
        wake(id, peerID)
    }

    func ackReceived(_ ack: ChunkAck, from peerID: PeerID) async {
        let id = ack.transferID
        // Acks still in flight when the transfer with this peer ended here (cancelled, failed) are harmless.
        guard var peer = operations[id]?.peers[peerID] else { return }
        do {
            switch try peer.machine.ackReceived(ack) {
            case .stored(let file, let bytes):
                peer.bytesDone += UInt64(bytes)
                peer.fileBytesDone[file] += UInt64(bytes)
                operations[id]?.peers[peerID] = peer
                reportProgress(id, peerID, file: file)
            case .late:
                break
            case .resend(let file, let offset):
                log(1, "\(peer.info.displayName) received a corrupt chunk (file \(file), offset \(offset)): re-sending")
                operations[id]?.peers[peerID] = peer
            }
        } catch {
            await violation(by: peerID, error.description)
            return
        }
        wake(id, peerID)
    }

    func resultReceived(_ result: FileResult, from peerID: PeerID) async {
        let id = result.transferID
        guard var peer = operations[id]?.peers[peerID], let operation = operations[id] else { return }
        do {
            try peer.machine.resultReceived(result)
        } catch {
            await violation(by: peerID, error.description)
            return
        }
        let file = Int(result.fileIndex)
        let offered = operation.offer.files[file]
        let published = result.status == .published
        if published { peer.filesSucceeded += 1 } else { peer.filesFailed += 1 }
        operations[id]?.peers[peerID] = peer
        let resumed = peer.machine.isAccepted(file) ? min(peer.fileBytesDone[file], offered.size) : 0
        emit(
            .fileFinished(
                FileOutcome(
                    transferID: id, peer: peer.info, direction: .sending, fileIndex: file, fileName: offered.path,
                    size: offered.size, publishedName: published ? result.detail : nil,
                    failure: published ? nil : (result.detail.isEmpty ? "\(result.status)" : "\(result.status): \(result.detail)"),
                    resumedBytes: published ? 0 : resumed)))
        wake(id, peerID)
    }

    /// Ends the transfer with one peer: `cancel` says whether (and why) the peer is told.
    /// Ends the transfer with one peer. `cancel` says whether (and why) the peer is told; `detail` is what it is
    /// told beyond the reason (by default the failure text).
    func failPeer(
        _ id: TransferID, _ peerID: PeerID, _ failure: String, cancel reason: CancelReason?, detail: String? = nil
    ) async {
        // A transfer that already ran to its end (every result in, or denied) is not failed by a later event,
        // such as the receiver closing its link right after its last result.
        guard var peer = operations[id]?.peers[peerID], peer.machine.phase != .finished else { return }
        peer.failure = peer.failure ?? failure
        peer.machine.stop()
        operations[id]?.peers[peerID] = peer
        if let reason {
            let cancel = TransferCancel(transferID: id, reason: reason, detail: Self.detail(detail ?? failure))
            await send(.cancel(cancel), to: peerID)
        }
        wake(id, peerID)
    }

    /// Cancels a whole send: every peer still in it is told why.
    func cancelOperation(_ id: TransferID, reason: CancelReason, detail: String) async {
        guard let operation = operations[id] else { return }
        let text = detail.isEmpty ? "\(reason)" : detail
        for peerID in operation.peers.keys {
            if let peer = operations[id]?.peers[peerID], peer.machine.phase != .finished {
                await failPeer(id, peerID, text, cancel: reason, detail: detail)
            }
        }
    }

    func reportProgress(_ id: TransferID, _ peerID: PeerID, file: Int) {
        guard var peer = operations[id]?.peers[peerID], let operation = operations[id] else { return }
        let total = Self.acceptedBytes(operation.offer.files, peer.machine)
        let done = peer.bytesDone + peer.resumedBytes
        guard peer.meter.record(bytes: done, now: clock.now) else {
            operations[id]?.peers[peerID] = peer
            return
        }
        operations[id]?.peers[peerID] = peer
        let offered = operation.offer.files[file]
        emit(
            .progress(
                TransferProgress(
                    transferID: id, peer: peer.info, direction: .sending, fileIndex: file, fileName: offered.path,
                    fileBytesDone: peer.fileBytesDone[file], fileSize: offered.size, bytesDone: done,
                    totalBytes: total, filesDone: peer.filesSucceeded + peer.filesFailed,
                    fileCount: (0..<peer.machine.fileCount).filter { peer.machine.isAccepted($0) }.count,
                    rate: peer.meter.rate, secondsLeft: peer.meter.secondsLeft(remaining: total - min(done, total)))))
    }

    static func acceptedBytes(_ files: [OfferedFile], _ machine: OutgoingTransferMachine) -> UInt64 {
        files.indices.reduce(0) { $0 + (machine.isAccepted($1) ? files[$1].size : 0) }
    }

    /// The peer's transfer is over: its outcome, reported once.
    func finishPeer(_ id: TransferID, _ peerID: PeerID) -> TransferOutcome? {
        guard let operation = operations[id], let peer = operation.peers[peerID] else { return nil }
        operations[id]?.peers[peerID] = nil
        let accepted = (0..<peer.machine.fileCount).filter { peer.machine.isAccepted($0) }.count
        let skipped = peer.deniedReason != nil ? peer.machine.fileCount : peer.machine.fileCount - accepted
        let unfinished = (0..<peer.machine.fileCount).filter {
            peer.machine.isAccepted($0) && peer.machine.result(of: $0) == nil
        }.count
        let outcome = TransferOutcome(
            transferID: id, peer: peer.info, direction: .sending, filesSucceeded: peer.filesSucceeded,
            filesFailed: peer.filesFailed + unfinished, filesSkipped: skipped, bytes: peer.bytesDone,
            wireBytes: peer.wireBytes, chunkBytes: peer.chunkBytes, resumedBytes: peer.resumedBytes, duration: clock.now - peer.started,
            failure: peer.failure ?? peer.deniedReason.map { "the offer was denied (\($0))" })
        emit(.finished(outcome))
        log(1, "transfer \(id) to \(peer.info.displayName) finished: \(outcome.failure ?? "ok")")
        return outcome
    }
}
