import FerrySession
import FerryStateMachines
import FerrySystem
import FerryWire

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
            handle: RegularFile?, digest: (bytes: [UInt8], chunkSize: Int)?, size: UInt64
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
                        transfer.files[file].digest.map { ($0, Int(transfer.offer.chunkSize)) },
                        transfer.files[file].size
                    )
                }
            } ?? []
        guard !requests.isEmpty else { return false }
        let fileByFile = heavyFollows
        // One trip to the publishing queue syncs the batch and renames it into place, while the I/O queue goes on
        // writing the chunks of the next files. Every byte of these files is written already: a file is verified
        // only after its last write completed.
        let results = await publishing.run { () -> [(Int, Result<PublishedFile, SystemError>)] in
            let handles = requests.compactMap(\.handle)
            do throws(SystemError) {
                if fileByFile {
                    for handle in handles { try handle.sync(dataOnly: true) }
                } else {
                    try directory.syncBeforePublish(handles)
                }
            } catch {
                handles.forEach { $0.close() }
                return requests.map { ($0.file, .failure(error)) }
            }
            return requests.map { request in
                let result = Result { () throws(SystemError) -> PublishedFile in
                    try directory.publish(
                        key: request.key, components: request.components, permissions: request.permissions,
                        modificationTime: request.time, staged: request.handle, size: request.size,
                        digest: request.digest)
                }
                return (request.file, result)
            }
        }
        for (file, result) in results {
            switch result {
            case .success(let published):
                await fileSucceeded(file, published, key)
            case .failure(let error):
                await fileFailed(file, status: .writeFailed, detail: "\(error)", key, removeStaged: false)
            }
        }
        return true
    }

    /// Data a batch's `syncfs` may flush besides its own files before the turn counts as waiting behind later data.
    static let syncfsBesideBytes: UInt64 = 8 << 20

    /// Whether much data of later files is being (or about to be) written while `batch` is synced: a file in
    /// progress, or the files just after the batch, larger than `syncfsBesideBytes` together. Then each file of the
    /// batch gets its own `fdatasync` instead of one `syncfs`, which would also flush the dirty pages of that data
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

    private func fileSucceeded(_ file: Int, _ published: PublishedFile, _ key: IncomingKey) async {
        let identical = published.isIdentical
        let publishedName = published.name
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
                    return FileOutcome(
                        transferID: key.transferID, peer: transfer.peer, direction: .receiving, fileIndex: file,
                        fileName: transfer.offer.files[file].path, size: transfer.files[file].size,
                        publishedName: publishedName, failure: nil, resumedBytes: transfer.files[file].resumeOffset,
                        alreadyThere: identical, digest: transfer.files[file].digest)
                })
        else { return }
        let what = identical ? "already there (identical):" : "published"
        log(2, "\(what) \(publishedName) from \(outcome.peer.displayName)")
        emit(.fileFinished(outcome))
        let result = FileResult(
            transferID: key.transferID, fileIndex: UInt32(file), status: .published,
            detail: Self.detail(publishedName), identical: identical)
        await send(.fileResult(result), to: key.peer)
        await finishIfDone(key)
    }
}
