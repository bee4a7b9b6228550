import FerrySession
import FerryStateMachines
import FerrySystem
import FerryWire
import Foundation

/// Publishing verified files: the publish loop of each transfer (group commit of sync and rename on the publishing
/// queue, while later files still stream), and the result each published file sends back.
extension TransferEngine {
    /// Starts the publish loop of a transfer that has verified files waiting, unless it runs already (it takes
    /// them then). Returns at once: the chunks and acknowledgements of the next files go on meanwhile.
    ///
    /// Why a loop and no fixed batch: a verified file must appear while later files still stream (a photo sent
    /// with a video appears when the photo is complete, not when the video is). Each turn takes every file
    /// verified so far and publishes them together on the publishing queue; the files verified during that sync
    /// make the next batch (group commit). Files that end close together (many small files) therefore share one
    /// `syncfs`, and no verified file waits for more than the turn before its own.
    func startPublishing(_ key: IncomingKey) {
        guard let directory = receiveDirectory else { return }
        let start = withIncoming(key) { transfer -> Bool in
            guard !transfer.isPublishing, !transfer.pending.isEmpty else { return false }
            transfer.isPublishing = true
            return true
        }
        if start == true { Task { await self.publishLoop(key, directory) } }
    }

    /// Publishes the files that are verified now and waits for the publish loop to end (nothing left waiting, or
    /// the transfer gone).
    func publishPending(_ key: IncomingKey) async {
        startPublishing(key)
        guard incoming[key]?.isPublishing == true else { return }
        await withCheckedContinuation { continuation in
            incoming[key]?.publishWaiters.append(continuation)
        }
    }

    /// Turns of sync and rename until no verified file waits; then wakes whoever waits for the loop.
    private func publishLoop(_ key: IncomingKey, _ directory: ReceiveDirectory) async {
        while await publishBatch(key, directory) {}
        let waiters = withIncoming(key) { transfer -> [CheckedContinuation<Void, Never>] in
            transfer.isPublishing = false
            defer { transfer.publishWaiters = [] }
            return transfer.publishWaiters
        }
        // A transfer that ended meanwhile woke its waiters in `finishIncoming`.
        for waiter in waiters ?? [] { waiter.resume() }
    }

    /// Syncs and renames into place every verified file waiting, then reports each to the sender. False when no
    /// file was waiting (or the transfer is gone).
    private func publishBatch(_ key: IncomingKey, _ directory: ReceiveDirectory) async -> Bool {
        typealias Request = (
            file: Int, key: String, components: [String], permissions: UInt16, time: (Int64, UInt32),
            handle: RegularFile?, digest: (bytes: [UInt8], chunkSize: Int)?, size: UInt64, inMemory: Bool,
            publishes: Bool, deliveredBy: String?
        )
        var heavyFollows = false
        let requests: [Request] =
            withIncoming(key) { transfer in
                let batch = transfer.pending
                transfer.pending = []
                heavyFollows = Self.heavyDataFollows(batch, in: transfer)
                return batch.map { file in
                    let offered = transfer.offer.files[file]
                    let handle = transfer.files[file].staged
                    transfer.files[file].staged = nil
                    return (
                        file, transfer.files[file].key, transfer.files[file].components, offered.permissions,
                        (offered.modificationTime.seconds, offered.modificationTime.nanoseconds), handle,
                        // The identical-file check hashes a taken name as this file was verified: by ferry's file
                        // digest at the offer's chunk size, or (chunk size 0) by the plain SHA-256 of a foreign file.
                        transfer.files[file].digest.map {
                            ($0, transfer.files[file].verification == .fileDigest ? Int(transfer.offer.chunkSize) : 0)
                        },
                        transfer.files[file].size, transfer.files[file].inMemory,
                        !transfer.files[file].inMemory || transfer.files[file].alsoPublish,
                        transfer.offer.flags.contains(.replaces) ? transfer.peer.deviceID.hex : nil
                    )
                }
            } ?? []
        guard !requests.isEmpty else { return false }
        let fileByFile = heavyFollows
        // One trip to the publishing queue syncs the batch and renames it into place, while the I/O queue goes on
        // writing the chunks of the next files. Every byte of these files is written already: a file is verified
        // only after its last write completed.
        // `unsynced`: files whose sync failed. Their staged data goes with them: pages whose writeback failed can stay
        // cached, so a resume would hash the cache, match, and publish bytes the disk may not hold.
        let (results, unsynced) = await publishing.run {
            () -> (results: [(Int, Result<Delivered, SystemError>)], unsynced: Set<Int>) in
            // Entries delivered in memory are read back first (only they: never synced, as they are not published).
            var payloads: [Int: Result<Data, SystemError>] = [:]
            for request in requests where request.inMemory {
                let payload = Result { () throws(SystemError) in try Self.readBack(request.handle, size: request.size) }
                payloads[request.file] = payload
                guard !request.publishes else { continue }
                // Delivered in memory only: its staged data goes (kept, for a later resume, when it could not be read).
                request.handle?.close()
                if case .success = payload { directory.removeStaged(key: request.key) }
            }
            // The files to publish go to the directory as one batch: mode and time, one sync, the renames, one sync
            // of each directory renamed into (`ReceiveDirectory.publish(_:syncEachFile:)`). Nothing is reported
            // before that returns: a file reported published survives a crash.
            var results: [Int: Result<Delivered, SystemError>] = [:]
            var batch: [(file: Int, payload: Data?, publication: Publication)] = []
            for request in requests {
                let payload: Data?
                do throws(SystemError) {
                    payload = try payloads[request.file]?.get()
                } catch {
                    if request.publishes { request.handle?.close() }
                    results[request.file] = .failure(error)
                    continue
                }
                guard request.publishes else {
                    results[request.file] = .success(Delivered(published: nil, payload: payload))
                    continue
                }
                var publication = Publication(
                    key: request.key, components: request.components, permissions: request.permissions,
                    modificationTime: request.time, staged: request.handle, size: request.size, digest: request.digest)
                publication.deliveredBy = request.deliveredBy
                batch.append((request.file, payload, publication))
            }
            let outcomes = directory.publish(batch.map(\.publication), syncEachFile: fileByFile)
            var unsynced: Set<Int> = []
            for (entry, outcome) in zip(batch, outcomes) {
                if outcome.syncFailed { unsynced.insert(entry.file) }
                results[entry.file] = outcome.result.map {
                    Delivered(published: $0, payload: entry.payload, replaced: outcome.replaced)
                }
            }
            let ordered = requests.map { request in
                (
                    request.file,
                    results[request.file] ?? .failure(SystemError(call: "publish", errno: .badFileDescriptor))
                )
            }
            return (ordered, unsynced)
        }
        // The results of the turn go to the sender together (one trip to the session, one write for many small
        // files), in the order of the turn: a failure's own result waits for the results before it.
        var frames: [TransferMessage] = []
        var succeeded: [Int] = []
        for (file, result) in results {
            switch result {
            case .success(let delivered):
                if let frame = fileSucceeded(file, delivered, key) {
                    frames.append(frame)
                    succeeded.append(file)
                }
            case .failure(let error):
                await sendResults(&frames, key)
                await fileFailed(
                    file, status: .writeFailed, detail: "\(error)", key, removeStaged: unsynced.contains(file))
            }
        }
        await sendResults(&frames, key)
        for file in succeeded { await swarmFileEnded(file, published: true, key) }
        await finishIfDone(key)
        return true
    }

    /// Ends a file the receive directory already held as `name` (PROTOCOL.md 11.10 rule 10), its `fileEnd` digest
    /// checked: reported published and identical, the held file untouched, nothing staged.
    func alreadyThereEnded(_ file: Int, as name: String, _ key: IncomingKey) async {
        guard let frame = fileSucceeded(file, Delivered(published: .identical(name), payload: nil), key) else { return }
        var frames = [frame]
        await sendResults(&frames, key)
        await finishIfDone(key)
    }

    /// Sends the `fileResult`s in `frames` to the transfer's sender in one queue entry (a foreign peer's adapter:
    /// each as a value), and empties it.
    private func sendResults(_ frames: inout [TransferMessage], _ key: IncomingKey) async {
        guard !frames.isEmpty else { return }
        defer { frames = [] }
        if key.peer.isForeign {
            for frame in frames { _ = answerForeign(frame, to: key.peer) }
            return
        }
        do {
            // Acknowledgements held for the peer go first (`completed(_:)`).
            let acks = incoming.takeHeldAcks(for: key.peer)
            if !acks.isEmpty { probe.ackEntries += 1 }
            try await session.sendTransferFrame(acks + frames.map { $0.frame.encoded() }, to: key.peer)
        } catch {
            log(2, "could not send \(frames.count) file results to \(key.peer): \(error)")
        }
    }

    /// Data a batch's `syncfs` may flush besides its own files before the turn counts as waiting behind later data.
    static let syncfsBesideBytes: UInt64 = 8 << 20

    /// Whether much data of later files is being (or about to be) written while `batch` is synced: a file in
    /// progress, or the files just after the batch, larger than `syncfsBesideBytes` together. Then each file of the
    /// batch gets its own `fsync` instead of one `syncfs`, which would also flush the dirty pages of that data
    /// (a photo sent before a video would wait for the video's first hundreds of megabytes). Looks at no more than
    /// 64 files; other transfers are not counted.
    static func heavyDataFollows(_ batch: [Int], in transfer: IncomingTransfer) -> Bool {
        guard batch.count > 1, let last = batch.max() else { return false }
        let current = transfer.currentFile
        if current > last, !transfer.files[current].ended, transfer.files[current].size > syncfsBesideBytes {
            return true
        }
        var following: UInt64 = 0
        for index in (last + 1)..<min(last + 65, transfer.files.count)
        where transfer.files[index].accepted && !transfer.files[index].ended {
            following += transfer.files[index].size - transfer.files[index].resumeOffset
            if following > syncfsBesideBytes { return true }
        }
        return false
    }

    /// Records a published (or delivered) file and reports it; returns its `fileResult` for the sender (nil when the
    /// transfer is gone).
    private func fileSucceeded(_ file: Int, _ delivered: Delivered, _ key: IncomingKey) -> TransferMessage? {
        let identical = delivered.published?.isIdentical ?? false
        let publishedName = delivered.published?.name
        swarmFilePublished(file, delivered.published, key)
        guard
            let outcome = withIncoming(
                key,
                { transfer -> FileOutcome in
                    transfer.machine?.fileEnded(file)
                    transfer.files[file].ended = true
                    transfer.files[file].reservation?.release()  // published: the staged name is free again
                    transfer.files[file].reservation = nil
                    transfer.endedCount += 1
                    transfer.filesSucceeded += 1
                    var outcome = FileOutcome(
                        transferID: key.transferID, peer: transfer.peer, direction: .receiving, fileIndex: file,
                        fileName: transfer.offer.files[file].path, size: transfer.files[file].size,
                        publishedName: publishedName, failure: nil, resumedBytes: transfer.files[file].resumedBytes,
                        alreadyThere: identical, payload: delivered.payload,
                        mediaType: transfer.offer.files[file].mediaType, digest: transfer.files[file].digest,
                        replaced: delivered.replaced)
                    outcome.verification = transfer.files[file].verification
                    return outcome
                })
        else { return nil }
        let what = identical ? "already there (identical):" : publishedName == nil ? "delivered in memory" : "published"
        log(2, "\(what) \(publishedName ?? outcome.fileName) from \(outcome.peer.displayName)")
        emit(.fileFinished(outcome))
        // An entry delivered in memory only is reported under its offered name (PROTOCOL.md 11.8).
        let result = FileResult(
            transferID: key.transferID, fileIndex: UInt32(file), status: .published,
            detail: Self.detail(publishedName ?? outcome.fileName), identical: identical)
        return .fileResult(result)
    }
}

/// How a verified entry was delivered: published (as what), in memory (its bytes), or both.
struct Delivered: Sendable {
    var published: PublishedFile?
    var payload: Data?
    /// Published in place of the earlier version its sender delivered (PROTOCOL.md 11.10 rule 11).
    var replaced = false
}

extension TransferEngine {
    /// The verified bytes of an entry delivered in memory, read back through the staged file's descriptor (the one
    /// that was written and verified). Throws ESTALE when the file no longer has the size verified.
    static func readBack(_ handle: RegularFile?, size: UInt64) throws(SystemError) -> Data {
        guard let handle else { throw SystemError(call: "read back the staged data", errno: .badFileDescriptor) }
        var data = Data(capacity: Int(size))
        var offset: UInt64 = 0
        while offset < size {
            let bytes = try handle.read(count: Int(min(size - offset, 1 << 20)), at: offset)
            guard !bytes.isEmpty else { break }
            data.append(contentsOf: bytes)
            offset += UInt64(bytes.count)
        }
        guard offset == size, try handle.status().size == size else {
            throw SystemError(call: "read back the staged data (it changed size)", errno: Errno(rawValue: ESTALE))
        }
        return data
    }
}
