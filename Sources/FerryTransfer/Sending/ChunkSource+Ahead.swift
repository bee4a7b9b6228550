import FerryStateMachines
import FerrySystem

/// Compress-ahead: the next chunk of a file is read, hashed and compressed while the pump sends the one before.
///
/// Why: the pump prepared one chunk at a time (read, hash, compress, then send, then ask for the next), so the
/// chunk source's queue stood idle while the pump waited for the window or the link writer, and the link could
/// idle while the next chunk was compressed (over a 100 Mbit/s link the socket held nothing for stretches:
/// ARCHITECTURE "Over a 100 Mbit/s link"). Now each chunk of a file's first pass queues the work of the file's next
/// chunk right after its own, with the choice the policy would make next (`CompressionPolicy.upcoming`) and this
/// chunk as prefix. One chunk ahead at most (its raw and compressed bytes and its prefix: about 3 MiB). When the
/// chunk is asked for, the policy decides as before, from the pace the pump measured; only if that choice or the
/// prefix differs (a move of the level, a peer that was not sent the chunk before) is the chunk compressed again,
/// from the raw bytes already read and hashed. The hash claim is made when the work is queued, so the file digest
/// still takes the chunks in order; a chunk prepared ahead that nobody asks for (the transfer ended) costs one read.
extension ChunkSource {
    struct Ahead: Sendable {
        var key: Key
        var length: Int
        /// What it was compressed with, and the prefix it was compressed against (the file's chunk before).
        var compression: CompressionPolicy.Choice?
        var prefix: [UInt8]?
        var work: Task<Result<Made, Failure>, Never>
        /// The work's result, once recorded (in `readyAhead`).
        var made: Made

        /// A serial number, telling one `ahead` from a later one across an await.
        var serial: Int
    }

    /// Queues the work of the chunk after `key` (`length` raw bytes; `raw` its bytes) when it continues the
    /// file's first pass and nothing is prepared ahead already.
    func prepareAhead(after key: Key, length: Int, raw: [UInt8], prefixed: Bool) {
        let index = key.file
        let next = key.offset + UInt64(length)
        let size = files[index].offered.size
        let nextKey = Key(file: index, offset: next)
        guard ahead == nil, readyAhead == nil, next < size, files[index].failure == nil, files[index].digest == nil,
            files[index].hashedUpTo == next, cache[nextKey] == nil, let handle = files[index].handle,
            let hash = claimHash(index, through: next + min(UInt64(chunkSize), size - next))
        else { return }
        let nextLength = Int(min(UInt64(chunkSize), size - next))
        let compression = policy.upcoming
        let prefix = prefixed && compression?.algorithm == .zstd ? raw : nil
        let name = files[index].source.path
        let chunkSize = self.chunkSize
        let offered = files[index].status
        let completesHash = next + UInt64(nextLength) == offered.size
        diskReads += 1
        files[index].users += 1
        // Queued now, from the actor, so it reaches the queue before any later work (the hash's order).
        let (results, continuation) = AsyncStream.makeStream(of: Result<Made, Failure>.self)
        io.submit {
            continuation.yield(
                Result { () throws(Failure) -> Made in
                    try Self.make(
                        handle, offset: next, length: nextLength, hash: hash, knownDigest: nil,
                        compression: compression, prefix: prefix, completesHash: completesHash, name: name,
                        chunkSize: chunkSize, offered)
                })
            continuation.finish()
        }
        let work = Task<Result<Made, Failure>, Never> {
            for await result in results { return result }
            return .failure(.readFailed(file: name, reason: "the read was abandoned"))
        }
        aheadSerial += 1
        ahead = Ahead(
            key: nextKey, length: nextLength, compression: compression, prefix: prefix, work: work,
            made: Made(prepared: Prepared(rawLength: 0, codec: .none, sha256: [], data: []), raw: []),
            serial: aheadSerial)
    }

    /// Waits for the chunk being prepared ahead, if any, and records it as a chunk prepared on request is recorded:
    /// the file's failure or digest, and the prefix of the chunk after it.
    func settleAhead() async {
        guard let pending = ahead else { return }
        let result = await pending.work.value
        guard ahead?.serial == pending.serial else { return }  // another request recorded it meanwhile
        ahead = nil
        let index = pending.key.file
        defer { release(index) }
        guard let made = try? recorded(result, index) else { return }
        if pending.key.offset + UInt64(pending.length) < files[index].offered.size {
            lastRaw = (pending.key, made.raw)
        }
        recordDigest(made, index)
        var ready = pending
        ready.made = made
        readyAhead = ready
    }

    /// The chunk at `key` if it was prepared ahead (waiting for its work if need be); throws the file's failure if
    /// that work found one.
    func takeAhead(_ key: Key, length: Int) async throws(Failure) -> Ahead? {
        guard ahead?.key == key || readyAhead?.key == key else { return nil }
        await settleAhead()
        if let failure = files[key.file].failure { throw failure }
        guard let ready = readyAhead, ready.key == key, ready.length == length else { return nil }
        readyAhead = nil
        return ready
    }
}
