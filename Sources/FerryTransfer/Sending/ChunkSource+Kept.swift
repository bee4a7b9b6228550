import FerrySystem
import FerryWire

/// Chunk digests kept between sends (`DigestCache`): a file sent before and unchanged since is read, not hashed.
///
/// Its digests come with it (`PreparedFile.cachedDigests`, looked up while the offer is prepared) and its file digest
/// follows from them, so no hash is claimed for it: each chunk is read, checked against the status it was offered
/// with (as every read is) and sent with its kept digest, and its `fileEnd` goes with its last chunk. A file hashed
/// whole by its first pass here, and settled (`DigestCache.isSettled`), has its chunk digests kept when the send ends
/// (`close`). A peer that finds one of its chunks corrupt makes the source forget them (`forgetKeptDigests`).
extension ChunkSource {
    /// The kept digest of the chunk at `offset`, and marks the file's pass done when it is its last chunk; nil for a
    /// file without kept digests.
    func keptDigest(_ index: Int, offset: UInt64, length: Int) -> [UInt8]? {
        guard let kept = files[index].kept, offset % UInt64(chunkSize) == 0 else { return nil }
        let start = Int(offset / UInt64(chunkSize)) * FileDigest.length
        guard start + FileDigest.length <= kept.count else { return nil }
        if offset + UInt64(length) >= files[index].offered.size { files[index].keptPassDone = true }
        return Array(kept[start..<(start + FileDigest.length)])
    }

    /// Whether the chunk at `key` is the last of a file with kept digests (its `fileEnd` goes with it).
    func endsKeptPass(_ key: Key, length: Int) -> Bool {
        files[key.file].kept != nil && key.offset + UInt64(length) == files[key.file].offered.size
    }

    /// Whether the first pass over the file keeps its chunk digests for the `DigestCache`.
    func keeps(_ index: Int) -> Bool {
        guard let digestCache, files[index].memory == nil else { return false }
        return DigestCache.isWorthKeeping(size: files[index].offered.size, chunkSize: chunkSize)
            && digestCache.isSettled(files[index].status, statedAt: files[index].statedAt)
    }

    /// The chunk digests of `hasher`, which just finished the file digest, are kept when the send ends.
    func keep(_ hasher: FileDigest?, _ index: Int) {
        guard files[index].kept == nil, let digests = hasher?.chunkDigests else { return }
        files[index].toKeep = digests
    }

    /// Writes the digests of the files hashed whole in this send to the cache (on the queue).
    func storeKept() async {
        guard let digestCache else { return }
        let entries = files.compactMap { file in file.toKeep.map { ($0, file.status, file.statedAt) } }
        for index in files.indices { files[index].toKeep = nil }
        guard !entries.isEmpty else { return }
        let chunkSize = self.chunkSize
        await io.run { () -> Void in digestCache.store(entries, chunkSize: chunkSize) }
    }

    /// A peer found a chunk of the file corrupt, or the file not matching its digest. Its kept digests, if it had
    /// any, may be stale (the file rewritten without a new change time: through a shared memory mapping, or in the
    /// same clock tick): they are forgotten, here and in the cache, with every chunk prepared from them, and from now
    /// on the file is hashed from its bytes like any other (a chunk sent again, and the file digest if its `fileEnd`
    /// is still to come). True when the file was sent with kept digests in this send (now or before).
    @discardableResult
    func forgetKeptDigests(file index: Int) async -> Bool {
        guard files[index].kept != nil else { return files[index].keptForgotten }
        files[index].kept = nil
        files[index].keptForgotten = true
        files[index].keptPassDone = false
        digestCache?.remove(files[index].status, chunkSize: chunkSize)
        await settleAhead()
        aheads.removeAll { $0.key.file == index }
        if chainTail?.key.file == index { chainTail = nil }
        for key in cache.keys where key.file == index {
            if let removed = cache.removeValue(forKey: key) { cacheBytes -= removed.data.count }
        }
        rawDigests = rawDigests.filter { $0.key.file != index }
        files[index].digest = nil
        files[index].hashedUpTo = 0
        files[index].hasher = nil
        return true
    }
}
