import FerryStateMachines
import FerrySystem
import FerryWire

/// Files of one chunk read and hashed together: one trip to the queue for several small files.
///
/// Why: each file of one chunk (its whole content in one chunk) was read and hashed by its own trip to the queue,
/// and the pump waited for it: a wake of the queue's thread and a wake of the pump for every small file, which
/// with the link writer's and the receiver's made about five context switches a file on each end (ARCHITECTURE
/// "Row 2, a tenth session"). Chunks ahead (`ChunkSource+Ahead`) go on only within a file. Now, when the pump asks
/// for a file of one chunk as its first pass, sent raw (the policy chose no compression), to one peer, the files
/// right after it in the offer that are like it are read and hashed in the same trip, up to `togetherFiles` files
/// and `togetherBytes` bytes, and kept here until the pump asks for them: a file the peer does not ask for (it
/// declined it, or it was complete already) cost its read and hash, nothing else.
///
/// What stays as it was: each file's hash is claimed here, in the actor, in order, before the work is queued; a
/// file's failure (unreadable, changed) is recorded for the file when the work ends, whoever asks for it, and fails
/// only that file; the digest a file's work computed is recorded then too. A file kept here that is asked for when
/// the policy chooses compression is compressed then, from its raw bytes, on the queue.
extension ChunkSource {
    /// Most files read in one trip (the one asked for included).
    static let togetherFiles = 64
    /// Most bytes read in one trip.
    static let togetherBytes = 256 << 10

    /// The chunk at `key`, when it is a file of one chunk read together with others (now, or by an earlier request);
    /// nil when it is not one (the caller prepares it as any chunk).
    func takeTogether(
        _ key: Key, length: Int, compression: CompressionPolicy.Choice?
    ) async throws(Failure) -> (made: Made, compressedAgain: Bool)? {
        let index = key.file
        if let kept = together.removeValue(forKey: index) {
            guard key.offset == 0, kept.prepared.rawLength == length else { return nil }
            aheadTaken += 1
            guard let compression else { return (kept, false) }
            let raw = kept.raw
            let work = await io.run { () -> Made in
                var again = kept
                again.prepared.data = raw
                again.prepared.codec = .none
                again.compressSeconds = Self.compress(&again.prepared, compression, prefix: nil)
                return again
            }
            return (work, true)
        }
        guard compression == nil, cacheLimit == 0, key.offset == 0, isAlone(index, length: length) else { return nil }
        var batch = [index]
        var bytes = length
        var next = index + 1
        while next < files.count, batch.count < Self.togetherFiles, isAlone(next, length: nil),
            bytes + Int(files[next].offered.size) <= Self.togetherBytes
        {
            batch.append(next)
            bytes += Int(files[next].offered.size)
            next += 1
        }
        guard batch.count > 1 else { return nil }
        typealias Job = (
            index: Int, handle: SourceHandle, hash: (from: UInt64, hasher: FileDigest), length: Int, name: String,
            offered: FerrySystem.FileStatus
        )
        var jobs: [Job] = []
        for file in batch {
            let handle: SourceHandle
            do throws(Failure) {
                handle = try openIfNeeded(file)
            } catch {
                if file == index { throw error }
                break  // the files after it go one by one, as before
            }
            guard let hash = claimHash(file, through: files[file].offered.size) else { break }
            files[file].users += 1
            jobs.append((file, handle, hash, Int(files[file].offered.size), files[file].source.path, files[file].status))
        }
        diskReads += jobs.count
        let chunkSize = self.chunkSize
        let queued = jobs
        let results = await io.run { () -> [Result<Made, Failure>] in
            queued.map { job in
                Result { () throws(Failure) -> Made in
                    try Self.make(
                        job.handle, offset: 0, length: job.length, hash: job.hash, knownDigest: nil, compression: nil,
                        prefix: nil, completesHash: true, name: job.name, chunkSize: chunkSize, job.offered)
                }
            }
        }
        var asked: Result<Made, Failure>?
        for (job, result) in zip(jobs, results) {
            if let made = try? recorded(result, job.index) {
                recordDigest(made, job.index)
                if job.index != index { together[job.index] = made }
            }
            release(job.index)
            if job.index == index { asked = result }
        }
        guard let asked else { return nil }
        return (try asked.get(), false)
    }

    /// Whether file `index` is sent whole in one chunk of `length` bytes (or of its size) as its first pass, from
    /// disk, and nothing has started on it: what may be read together.
    private func isAlone(_ index: Int, length: Int?) -> Bool {
        let file = files[index]
        let size = file.offered.size
        return size > 0 && size <= UInt64(chunkSize) && length.map { UInt64($0) == size } != false
            && file.memory == nil && file.kept == nil && file.failure == nil && file.digest == nil
            && file.hashedUpTo == 0 && together[index] == nil && cache[Key(file: index, offset: 0)] == nil
    }
}
