import FerrySession
import FerryStateMachines
import FerrySystem
import FerryWire

extension TransferEngine {
    /// Runs `body` on an incoming transfer's record in place (taken out of the table meanwhile, so its per-file
    /// arrays are not copied on every mutation).
    @discardableResult
    func withIncoming<T>(_ key: IncomingKey, _ body: (inout IncomingTransfer) throws -> T) rethrows -> T? {
        try incoming.with(key, body)
    }

    func chunkReceived(_ chunk: Chunk, from peerID: PeerID) async {
        let key = IncomingKey(peer: peerID, transferID: chunk.transferID)
        // A chunk relayed by another member of a swarm carries the swarm ID (PROTOCOL.md 11.11).
        // (Looked up only for a chunk of no transfer here: the swarm ID is not built for every chunk of one.)
        if incoming[key] == nil, case let swarmID = SwarmID(chunk.transferID),
            memberSwarms[swarmID] != nil || memberSwarms.hasEnded(swarmID)
        {
            await relayedChunkReceived(chunk, from: peerID)
            return
        }
        let file = Int(chunk.fileIndex)
        typealias Arrival = (IncomingTransferMachine.ChunkVerdict, CodecSet, ArraySlice<UInt8>?, SHA256Hasher?)
        let arrival =
            withIncoming(key) { transfer -> Result<Arrival, TransferProtocolError>? in
                guard transfer.phase == .receiving else { return nil }
                if transfer.isEnding { return .success((.discard, [], nil, nil)) }
                do throws(TransferProtocolError) {
                    guard
                        let verdict = try transfer.machine?.chunkArrived(
                            file: file, offset: chunk.offset, rawLength: Int(chunk.rawLength))
                    else { return nil }
                    // The prefix of a zstdPrefixed chunk: the chunk stored just before it, which must be its file's
                    // previous chunk.
                    let previous = transfer.previousChunk
                    let prefix =
                        previous.map {
                            $0.file == file && $0.offset + UInt64(transfer.offer.chunkSize) == chunk.offset
                        } == true ? previous?.raw : nil
                    // A foreign peer's file is hashed whole as it comes (nil for a ferry file: its chunk digests).
                    return .success((verdict, transfer.codecs, prefix, transfer.files[file].wholeHasher))
                } catch {
                    return .failure(error)
                }
            } ?? nil
        let codecs: CodecSet
        let prefix: ArraySlice<UInt8>?
        let wholeHasher: SHA256Hasher?
        switch arrival {
        case nil:
            // Chunks still in flight when the transfer ended here (cancelled, failed) are dropped. Anything else is
            // data for an offer not (yet) accepted: never written or decompressed, and the link is closed.
            if incoming.hasEnded(key) { return }
            await violation(by: peerID, "a chunk for a transfer that was not accepted")
            return
        case .failure(let error):
            await violation(by: peerID, error.description)
            return
        case .success((.discard, _, _, _)):
            // A swarm member acknowledges every chunk the sender sent it, one it already got from another member
            // too: the sender counts it against this link's window until then (PROTOCOL.md 11.11 rule 7).
            if incoming[key]?.swarmID != nil, incoming[key]?.isEnding == false,
                incoming[key]?.machine?.isStored(file: file, offset: chunk.offset) == true
            {
                enqueue([.acknowledge(file: file, offset: chunk.offset, status: .stored)], key)
            }
            return
        case .success((.process, let agreed, let previous, let whole)):
            codecs = agreed
            prefix = previous
            wholeHasher = whole
        }
        let raw: ArraySlice<UInt8>
        var corrupt = false
        switch chunk.codec {
        case .none:
            raw = chunk.data
        case .zlib where codecs.contains(.zlib), .zstd where codecs.contains(.zstd):
            // Only a chunk the machine expects gets here: its raw length is the offer's chunk size or the file's
            // remainder, and the inflater allocates exactly that, never more.
            probe.inflatedChunks += 1
            do {
                raw = try ChunkInflater.inflate(
                    chunk.data, algorithm: chunk.codec == .zstd ? .zstd : .zlib, rawLength: Int(chunk.rawLength)
                )[...]
            } catch {
                raw = []
                corrupt = true
            }
        case .zstdPrefixed where codecs.contains(.zstdPrefixed):
            guard let prefix else {
                await violation(
                    by: peerID,
                    "a zstd-prefixed chunk (file \(file), offset \(chunk.offset)) not sent right after its file's "
                        + "previous chunk")
                return
            }
            probe.inflatedChunks += 1
            do {
                raw = try ChunkInflater.inflate(chunk.data, rawLength: Int(chunk.rawLength), prefix: prefix)[...]
            } catch {
                raw = []
                corrupt = true
            }
        default:
            await violation(by: peerID, "a chunk in codec \(chunk.codec), which was not agreed")
            return
        }
        // The chunk digest is checked here, before the chunk counts as stored; the file digest then needs only the
        // 32 bytes of that digest (PROTOCOL.md 11.7), never the bytes again.
        // A foreign peer's chunk has no digest: its bytes feed the file's one SHA-256 instead, each byte hashed once.
        if let wholeHasher {
            raw.withUnsafeBytes { wholeHasher.update($0) }
        } else if !corrupt {
            corrupt = raw.withUnsafeBytes { FileDigest.chunkDigest($0) } != chunk.sha256
        }
        if corrupt {
            log(1, "corrupt chunk from peer \(peerID): file \(file), offset \(chunk.offset)")
            let actions = withIncoming(key) { transfer in
                transfer.previousChunk = nil
                return transfer.machine?.chunkCorrupt(file: file, offset: chunk.offset)
            }
            if let actions = actions ?? nil {
                enqueue(actions, key)
            }
            return
        }
        let handle: RegularFile
        do {
            handle = try stagedHandle(file, key)
        } catch {
            await writeFailed(error, file: file, key)
            return
        }
        // Counted per sender, over all its transfers: two transfers at once must not double what one may queue.
        let admitted = incoming.admits(raw.count, from: peerID)
        let direct = handle.writesDirectly
        let stored =
            withIncoming(key) { transfer -> ([IncomingTransferMachine.Action], WriteBehind)?? in
                guard admitted else { return .some(nil) }
                guard
                    let actions = transfer.machine?.chunkStored(file: file, offset: chunk.offset, rawLength: raw.count)
                else { return nil }
                transfer.bytesDone += UInt64(raw.count)
                transfer.wireBytes += UInt64(chunk.data.count)
                transfer.files[file].stored += UInt64(raw.count)
                transfer.currentFile = file
                transfer.previousChunk = (file, chunk.offset, raw)
                // In order, the file digest is fed chunk by chunk; a swarm member's chunks come in any order, and their
                // digests are fed in order once the file is complete.
                if transfer.swarmID != nil {
                    transfer.files[file].chunkDigests[Int(chunk.offset / UInt64(transfer.offer.chunkSize))] =
                        chunk.sha256
                } else {
                    transfer.files[file].hasher?.add(chunkDigest: chunk.sha256)
                }
                let size = transfer.files[file].size
                // Direct writes leave nothing in the page cache to start or drop.
                let plan = WriteBehind.after(writing: raw.count, at: chunk.offset, fileSize: size)
                return (actions, direct ? WriteBehind() : plan)
            } ?? nil
        guard let stored else { return }
        guard let (actions, writeBehind) = stored else {
            await violation(by: peerID, "the sender ignores flow control (more than 64 MiB unacknowledged)")
            return
        }
        let queued = incoming.admit(raw.count, from: peerID)
        probe.largestQueuedBytes = max(probe.largestQueuedBytes, queued)
        reportIncomingProgress(key)
        if let swarmID = incoming[key]?.swarmID {
            let chunkSize = UInt64(incoming[key]?.offer.chunkSize ?? 1)
            let position = SwarmChunk(file: file, index: Int(chunk.offset / chunkSize))
            let swarmActions = withMemberSwarm(swarmID) { $0.fetcher.senderChunkStored(position) } ?? []
            await carryOut(swarmActions, swarmID)
        }
        // The write runs on the I/O queue while this actor checks the next chunk; the acknowledgement waits for the
        // write (not for write-behind's wait for the disk, which `Writeback` runs beside), so the sender's window
        // still bounds the bytes in flight.
        let offset = chunk.offset
        let (writeback, failure) = (self.writeback, incoming[key]?.files[file].writebackFailure ?? WritebackFailure())
        let written = incoming[key]?.files[file].written
        enqueue(actions, key, file: file, bytes: raw.count) { () throws(SystemError) in
            try handle.write(raw, at: offset)
            written?.add(raw.count)
            try writeBehind.perform(on: handle, writeback, failure: failure)
        }
    }

    /// Queues `actions` behind every write queued before them (and after `write`, if given), so that frames go out in
    /// the order the machine decided them, each after the bytes it reports are written.
    func enqueue(
        _ actions: [IncomingTransferMachine.Action], _ key: IncomingKey, file: Int = 0, bytes: Int = 0,
        write: (@Sendable () throws(SystemError) -> Void)? = nil
    ) {
        let completions = self.completions
        io.submit {
            var failure: SystemError?
            do throws(SystemError) {
                try write?()
            } catch {
                failure = error
            }
            completions.yield(WriteCompletion(key: key, file: file, bytes: bytes, actions: actions, failure: failure))
        }
    }

    /// A queued write (or just a turn) is done: carry out the actions that waited for it.
    func completed(_ completion: WriteCompletion) async {
        incoming.written(completion.bytes, by: completion.key.peer)
        if completion.endsTransfer {
            endStopped(completion.key)
            return
        }
        let ending = withIncoming(completion.key) { transfer -> Bool in transfer.isEnding }
        guard ending == false else { return }  // gone, or ending: nothing more goes out for it
        if let failure = completion.failure {
            await writeFailed(failure, file: completion.file, completion.key)
            return
        }
        await perform(completion.actions, completion.key)
    }

    /// The staged file of `file`, opened (and trimmed to the resume offset) on first use. Opened here rather than
    /// on the I/O queue: an `openat` is quick, and waiting for the queue would wait for every write queued before.
    func stagedHandle(_ file: Int, _ key: IncomingKey) throws(SystemError) -> RegularFile {
        guard let directory = receiveDirectory, let entry = incoming[key]?.files[file] else {
            throw SystemError(call: "open staged file", errno: .badFileDescriptor)
        }
        if let staged = entry.staged { return staged }
        let (handle, existing) = try directory.stagedFile(key: entry.key, holding: entry.reservation)
        if existing < entry.resumeOffset {
            // The verified prefix hashed at acceptance is gone (removed meanwhile): never extend it with zeros.
            handle.close()
            throw SystemError(
                call: "open the staged data of \(entry.components.joined(separator: "/")) (it vanished)",
                errno: .noSuchFileOrDirectory)
        }
        if existing != entry.resumeOffset {
            do throws(SystemError) {
                try handle.truncate(to: entry.resumeOffset)
            } catch {
                handle.close()
                throw error
            }
        }
        if directWrites, entry.size >= WriteBehind.minimumFileSize, !entry.inMemory, incoming[key]?.swarmID == nil {
            // A large file written once and left to others: past the page cache where the file system allows
            // (RegularFile.enableDirectWrites). Not a swarm member's, whose chunks are read back to serve others,
            // nor one delivered in memory, which is read back whole.
            handle.enableDirectWrites()
        }
        incoming[key]?.files[file].staged = handle
        stageAhead(after: file, key)
        openSwarmReader(file, key)
        return handle
    }

    func fileEndReceived(_ end: FileEnd, from peerID: PeerID) async {
        let key = IncomingKey(peer: peerID, transferID: end.transferID)
        typealias Outcome = Result<[IncomingTransferMachine.Action], TransferProtocolError>
        let outcome: Outcome? =
            withIncoming(key) { transfer -> Outcome? in
                guard transfer.phase == .receiving else { return nil }
                do throws(TransferProtocolError) {
                    guard
                        let actions = try transfer.machine?.fileEndArrived(file: Int(end.fileIndex), digest: end.digest)
                    else { return nil }
                    return .success(actions)
                } catch {
                    return .failure(error)
                }
            } ?? nil
        switch outcome {
        case .success(let actions):
            enqueue(actions, key)
        case .failure(let error):
            await violation(by: peerID, error.description)
        case nil:
            if incoming.hasEnded(key) { return }
            await violation(by: peerID, "the end of a file of a transfer that was not accepted")
        }
    }

    func perform(_ actions: [IncomingTransferMachine.Action], _ key: IncomingKey) async {
        for action in actions {
            switch action {
            case .acknowledge(let file, let offset, let status):
                let ack = ChunkAck(transferID: key.transferID, fileIndex: UInt32(file), offset: offset, status: status)
                if key.peer.isForeign {
                    continue  // an adapter is sent no acknowledgements (`answerForeign`)
                } else if incoming.isHoldingAcks {
                    incoming.hold(TransferMessage.chunkAck(ack).frame.encoded(), for: key.peer)
                } else {
                    await send(.chunkAck(ack), to: key.peer)
                }
            case .verify(let file, let expected):
                await verify(file, expected: expected, key)
            case .fail(let file, let status, let detail):
                await fileFailed(file, status: status, detail: detail, key, removeStaged: false)
            }
        }
    }

    private func verify(_ file: Int, expected: [UInt8], _ key: IncomingKey) async {
        guard let entry = incoming[key]?.files[file], !entry.ended, let directory = receiveDirectory else { return }
        if let held = entry.alreadyThere {
            await heldFileEnded(file, held: held.held, offered: held.digest, expected: expected, in: directory, key)
            return
        }
        // Write-behind's evictions of this file run beside the writes: all done, and none failed, before it counts
        // as written (a failed one consumed the error the sync before publishing would report).
        if entry.size >= WriteBehind.minimumFileSize || entry.staged == nil {
            await sendHeldAcks(to: key.peer)  // not held while this waits for the disk
        }
        if entry.size >= WriteBehind.minimumFileSize {
            if let failure = await writeback.drained(entry.writebackFailure) {
                await writeFailed(failure, file: file, key)
                return
            }
            guard incoming[key]?.files[file].ended == false else { return }
        }
        if entry.staged == nil {
            // An empty file, or one whose every byte was staged before: open (or create) it now.
            let stagedKey = entry.key
            let size = entry.size
            let reservation = entry.reservation
            do throws(SystemError) {
                let handle = try await io.run { () throws(SystemError) -> RegularFile in
                    let (handle, existing) = try directory.stagedFile(key: stagedKey, holding: reservation)
                    if existing < size {
                        // Resumed at its end, but the staged data is gone: never publish zeros in its place.
                        handle.close()
                        throw SystemError(call: "open the staged data (it vanished)", errno: .noSuchFileOrDirectory)
                    }
                    if existing != size { try handle.truncate(to: size) }
                    return handle
                }
                guard incoming[key]?.files[file].ended == false else {  // ended while it was opened
                    handle.close()
                    return
                }
                incoming[key]?.files[file].staged = handle
            } catch {
                await writeFailed(error, file: file, key)
                return
            }
        }
        if let hasher = entry.hasher, !entry.chunkDigests.isEmpty {
            // A swarm member's chunk digests, in chunk order after the resumed prefix.
            for index in entry.chunkDigests.keys.sorted() { hasher.add(chunkDigest: entry.chunkDigests[index] ?? []) }
            incoming[key]?.files[file].chunkDigests = [:]
        }
        // Ferry's file digest over the chunk digests, or a foreign file's SHA-256 of its bytes: compared with the
        // sender's, except for a file its sender gave no digest of (checked by its size alone, and said so).
        let digest =
            (entry.verification == .fileDigest ? entry.hasher?.finalize() : entry.wholeHasher?.finalize()) ?? []
        incoming[key]?.files[file].hasher = nil
        incoming[key]?.files[file].wholeHasher = nil
        guard digest == expected || entry.verification == .size else {
            await fileFailed(
                file, status: .hashMismatch, detail: "the digest of the received data does not match the sender's",
                key, removeStaged: true)
            return
        }
        withIncoming(key) { transfer in
            transfer.files[file].digest = digest
            transfer.pending.append(file)
        }
        startPublishing(key)
    }

    /// Ends `file` as failed: its result goes to the sender, and the transfer finishes if that was its last file
    /// (unless `finishing` is false: the caller ends the transfer itself).
    func fileFailed(
        _ file: Int, status: FerryWire.FileStatus, detail: String, _ key: IncomingKey, removeStaged: Bool,
        finishing: Bool = true
    ) async {
        var held = 0
        guard
            let (outcome, stagedKey, reservation, keepsStaged) = withIncoming(
                key,
                {
                    transfer -> (FileOutcome, String, StagedReservation?, Bool)? in
                    guard !transfer.files[file].ended else { return nil }
                    transfer.machine?.fileEnded(file)
                    transfer.files[file].ended = true
                    transfer.endedCount += 1
                    transfer.files[file].staged?.close()
                    transfer.files[file].staged = nil
                    transfer.files[file].hasher = nil
                    transfer.filesFailed += 1
                    transfer.pending.removeAll { $0 == file }
                    transfer.files[file].wholeHasher = nil
                    // A foreign peer's bytes held for the file's next chunk go with it (review: a failed file kept
                    // up to a chunk each until the transfer ended).
                    held = transfer.files[file].partialChunk.count
                    transfer.files[file].partialChunk = []
                    var outcome = FileOutcome(
                        transferID: key.transferID, peer: transfer.peer, direction: .receiving, fileIndex: file,
                        fileName: transfer.offer.files[file].path, size: transfer.files[file].size, publishedName: nil,
                        failure: "\(status): \(detail)", resumedBytes: transfer.files[file].resumedBytes)
                    outcome.verification = transfer.files[file].verification
                    defer { transfer.files[file].reservation = nil }
                    return (outcome, transfer.files[file].key, transfer.files[file].reservation, transfer.keepsStaged)
                }) ?? nil
        else { return }
        incoming.written(held, by: key.peer)  // bytes held for its next chunk are no longer queued
        // A foreign peer's staged data never serves a resume: it goes with its file whatever the failure.
        let removing = removeStaged || !keepsStaged
        if removing { receiveDirectory?.removeStaged(key: stagedKey) }
        if let reservation { probe.betweenStagedRemovalAndRelease?(reservation) }
        // After the removal: no other transfer takes up data that is going. An empty staged file created ahead
        // (`stageAhead`, on another thread) between the removal and the release is removed by the release itself,
        // under the lock that creation holds (review of issue 29: one could be left until the stale-file expiry).
        reservation?.release(removingEmpty: removing)
        await swarmFileEnded(file, published: false, key)
        emit(.fileFinished(outcome))
        let result = FileResult(
            transferID: key.transferID, fileIndex: UInt32(file), status: status, detail: Self.detail(detail))
        await send(.fileResult(result), to: key.peer)
        if finishing { await finishIfDone(key) }
    }

    /// A write to the staging area failed: a full disk ends the whole transfer (every later file would fail too),
    /// anything else ends the file. On a full disk the failing file's staged data is removed (it frees the space,
    /// and a file that could not be written is not kept for a resume): that file ends with its result first, so that
    /// the sender does not count it among what the receiver keeps (PROTOCOL.md 11.10 rule 7).
    func writeFailed(_ error: SystemError, file: Int, _ key: IncomingKey) async {
        guard incoming[key] != nil else { return }
        if error.isOutOfSpace {
            let where_ = receiveDirectory?.path ?? "the receive directory"
            await fileFailed(
                file, status: .writeFailed, detail: "disk full; its staged data was removed", key, removeStaged: true,
                finishing: false)
            await cancelIncoming(
                key, reason: .diskFull, detail: "the disk holding \(where_) is full", tellPeer: true)
        } else {
            await fileFailed(file, status: .writeFailed, detail: "\(error)", key, removeStaged: false)
        }
    }

    func reportIncomingProgress(_ key: IncomingKey) {
        let now = clock.now
        let progress =
            withIncoming(key) { transfer -> TransferProgress? in
                let done = transfer.bytesDone + transfer.resumedBytes
                guard transfer.meter.record(bytes: done, now: now) else { return nil }
                let file = transfer.currentFile
                let total = transfer.totalBytes
                return TransferProgress(
                    transferID: key.transferID, peer: transfer.peer, direction: .receiving, fileIndex: file,
                    fileName: transfer.offer.files[file].path,
                    fileBytesDone: transfer.files[file].resumeOffset + transfer.files[file].stored,
                    fileSize: transfer.files[file].size, bytesDone: done, totalBytes: total,
                    filesDone: transfer.filesSucceeded + transfer.filesFailed, fileCount: transfer.acceptedCount,
                    rate: transfer.meter.rate,
                    secondsLeft: transfer.meter.secondsLeft(remaining: total - min(done, total)))
            } ?? nil
        if let progress { emit(.progress(progress)) }
    }
}
