import FerryStateMachines
import FerrySystem
import FerryWire
import Synchronization

/// Compress-ahead: the next chunks of a file are read, hashed and compressed while the pump sends the ones before.
///
/// Why: the pump prepared one chunk at a time (read, hash, compress, then send, then ask for the next), so the
/// chunk source's queue stood idle while the pump waited for the window or the link writer, and the link could
/// idle while the next chunk was compressed (over a 100 Mbit/s link the socket held nothing for stretches:
/// ARCHITECTURE "Over a 100 Mbit/s link"). Each chunk of a file's first pass queues the work of the file's next
/// chunk right after its own, with the choice the policy would make next (`CompressionPolicy.upcoming`) and the
/// chunk before as prefix.
///
/// How deep: one chunk ahead, as long as the pump keeps asking. While it waits for its window (`extendAhead`), one
/// peer sent compressed chunks gets up to `aheadDepth` chunks ahead, within `aheadBudget` bytes of prepared data:
/// the queue goes on preparing, so when a run of highly compressible chunks is acknowledged at once the next ones
/// are ready, instead of being prepared one at a time (2-3 ms each) while the link idles (a tar of /usr/include over
/// 100 Mbit/s: 257 ms waiting for the window, then about 70 ms of idle link). Sending raw, or to several peers (whose
/// cache holds the chunks already), it stays one. Only the first chunk queued keeps its raw bytes; each deeper one
/// hands its raw bytes to the next as prefix (a `RawRelay`, on the queue) and keeps only what it made, so the queue
/// holds compressed bytes.
///
/// When a chunk is asked for, the policy decides as before, from the pace the pump measured. The first chunk ahead,
/// if that choice or the prefix differs (a move of the level, a peer that was not sent the chunk before), is
/// compressed again from its raw bytes. A deeper one goes as it was made when its prefix is allowed (the level it
/// was made at is a few chunks old: it gives the controller no pace), else it is read again (its digest known) and
/// compressed without a prefix. The hash claim is made when the work is queued, so the file digest still takes the
/// chunks in order; a chunk prepared ahead that nobody asks for (the transfer ended) costs its read and compression,
/// and its work still records what it hashed.
extension ChunkSource {
    /// Most chunks prepared ahead of one peer sent compressed chunks.
    static let aheadDepth = 32
    /// Most bytes of prepared (compressed) data those chunks hold; a chunk not made yet counts as its raw length.
    static let aheadBudget = 8 << 20

    struct Ahead: Sendable {
        var key: Key
        var length: Int
        /// What it is compressed with, and whether against the file's chunk before.
        var compression: CompressionPolicy.Choice?
        var prefixed: Bool
        /// The prefix's bytes, kept only by a chunk that keeps its raw bytes (the first queued): it can be
        /// compressed again.
        var prefix: [UInt8]?
        /// The work's result, once recorded (`aheadFinished`); `made.raw` is empty for a chunk queued behind another.
        var made: Made?
        var failed = false
        /// A serial number, telling one ahead from a later one across an await.
        var serial: Int
    }

    /// The raw bytes of a chunk, handed on the queue to the work of the file's next chunk (its prefix).
    final class RawRelay: Sendable {
        private let bytes: Mutex<[UInt8]?>
        init(_ bytes: [UInt8]? = nil) { self.bytes = Mutex(bytes) }
        func put(_ raw: [UInt8]) { bytes.withLock { $0 = raw } }
        /// The bytes, left in place.
        func peek() -> [UInt8]? { bytes.withLock { $0 } }
        /// The bytes, no longer kept here.
        func take() -> [UInt8]? { bytes.withLock { $0.take() } }
    }

    /// The last chunk of a file prepared or queued whose next chunk may be queued: where the chain of aheads goes on.
    struct ChainTail: Sendable {
        var key: Key
        var length: Int
        var relay: RawRelay
        /// The chain compresses each chunk against the one before (when zstd).
        var prefixed: Bool
    }

    /// Queues chunks after the chain's tail while depth and budget allow.
    func fillAhead() {
        while queueAhead() {}
    }

    /// The pump waits for its window: chunks beyond the next may be prepared meanwhile (one peer sent compressed
    /// chunks), until the pump asks for its next chunk.
    func extendAhead() {
        extending = true
        fillAhead()
    }

    /// Queues the work of the chunk after `chainTail` when it continues the file's first pass and the queue has
    /// room; false when it did not.
    private func queueAhead() -> Bool {
        guard let tail = chainTail else { return false }
        let index = tail.key.file
        let next = tail.key.offset + UInt64(tail.length)
        let size = files[index].offered.size
        guard next < size else { return false }
        let nextKey = Key(file: index, offset: next)
        let nextLength = Int(min(UInt64(chunkSize), size - next))
        let compression = policy.upcoming
        let depth = extending && compression != nil && cacheLimit == 0 ? Self.aheadDepth : 1
        let queued = aheads.reduce(0) { $0 + ($1.made?.prepared.data.count ?? $1.length) }
        guard aheads.count < depth, aheads.isEmpty || queued + nextLength <= Self.aheadBudget,
            files[index].failure == nil, cache[nextKey] == nil, let handle = files[index].handle
        else { return false }
        // A file with kept digests (`ChunkSource+Kept`) is read ahead without hashing; any other only as the next
        // part of its first pass, which the chunk's work hashes.
        let kept = keptDigest(index, offset: next, length: nextLength)
        let hash: (from: UInt64, hasher: FileDigest)?
        if kept != nil {
            hash = nil
        } else {
            guard files[index].digest == nil, files[index].hashedUpTo == next,
                let claimed = claimHash(index, through: next + UInt64(nextLength))
            else { return false }
            hash = claimed
        }
        let prefixed = tail.prefixed && compression?.algorithm == .zstd
        let keepsRaw = aheads.isEmpty
        let previous = tail.relay
        let relay = RawRelay()
        let name = files[index].source.path
        let chunkSize = self.chunkSize
        let offered = files[index].status
        let completesHash = hash != nil && next + UInt64(nextLength) == offered.size
        let isLast = next + UInt64(nextLength) == offered.size
        // The first chunk queued keeps its prefix, to be compressed again; the relay still holds it (it is the raw
        // bytes of the chunk just prepared, or of the first ahead's predecessor).
        let keptPrefix = keepsRaw && prefixed ? previous.peek() : nil
        diskReads += 1
        files[index].users += 1
        aheadSerial += 1
        let serial = aheadSerial
        // Queued now, from the actor, so it reaches the queue before any later work (the hash's order).
        let (results, continuation) = AsyncStream.makeStream(of: Result<Made, Failure>.self)
        io.submit {
            // The chunk before ran first on this serial queue: its raw bytes are in `previous`, needed by nobody else
            // once taken (the tail's own relay is `relay`).
            let prefixBytes = previous.take()
            continuation.yield(
                Result { () throws(Failure) -> Made in
                    var made = try Self.make(
                        handle, offset: next, length: nextLength, hash: hash, knownDigest: kept,
                        compression: compression, prefix: prefixed ? prefixBytes : nil, completesHash: completesHash,
                        name: name, chunkSize: chunkSize, offered)
                    if !isLast { relay.put(made.raw) }
                    if !keepsRaw { made.raw = [] }
                    return made
                })
            continuation.finish()
        }
        aheadWorks[serial] = Task { [weak self] in
            var outcome = Result<Made, Failure>.failure(.readFailed(file: name, reason: "the read was abandoned"))
            for await result in results { outcome = result }
            await self?.aheadFinished(serial, file: index, outcome)
        }
        aheads.append(
            Ahead(
                key: nextKey, length: nextLength, compression: compression, prefixed: prefixed, prefix: keptPrefix,
                serial: serial))
        chainTail = ChainTail(key: nextKey, length: nextLength, relay: relay, prefixed: tail.prefixed)
        return true
    }

    /// Records a chunk's work: the file's failure or digest, whether or not the chunk is still queued (its work
    /// claimed the file's hash), then fills the queue again.
    private func aheadFinished(_ serial: Int, file index: Int, _ result: Result<Made, Failure>) {
        aheadWorks[serial] = nil
        let made = try? recorded(result, index)
        if let made { recordDigest(made, index) }
        if let position = aheads.firstIndex(where: { $0.serial == serial }) {
            if let made { aheads[position].made = made } else { aheads[position].failed = true }
        }
        release(index)
        fillAhead()
    }

    /// Waits for every chunk's work queued ahead (each records what it hashed).
    func settleAhead() async {
        while let work = aheadWorks.values.first { await work.value }
    }

    /// The chunk at `key` if it was prepared ahead (waiting for its work if need be); throws the file's failure if
    /// the work found one. Chunks queued before it, or of another file, were skipped: they are dropped (their work
    /// still records what it hashed). Chunks after it stay (a resend of an earlier chunk leaves the queue alone).
    func takeAhead(_ key: Key, length: Int) async throws(Failure) -> Ahead? {
        aheads.removeAll { $0.key.file != key.file || $0.key.offset < key.offset }
        if let tail = chainTail, tail.key.file != key.file { chainTail = nil }  // the chain of a file left behind
        guard let serial = aheads.first(where: { $0.key == key })?.serial else { return nil }
        if let work = aheadWorks[serial] { await work.value }
        if let failure = files[key.file].failure { throw failure }
        guard let first = aheads.first, first.serial == serial, first.made != nil, first.length == length else {
            return nil
        }
        aheads.removeFirst()
        return first
    }

    /// What goes for a chunk prepared ahead, asked for with `compression` (the policy's choice now): as it was made
    /// when that choice and its prefix still hold; compressed again when either changed and its raw bytes are at
    /// hand; as it was made when it kept no raw bytes and its prefix is allowed (made a few chunks ago at the level of
    /// then); else read again and compressed without a prefix. `compressedAgain`: its pace says nothing of the
    /// choice.
    func use(
        _ early: Ahead, _ earlyMade: Made, _ key: Key, length: Int, compression: CompressionPolicy.Choice?,
        prefixAllowed: Bool
    ) async throws(Failure) -> (made: Made, compressedAgain: Bool) {
        aheadTaken += 1
        let prefixWanted = prefixAllowed && compression?.algorithm == .zstd
        if early.compression == compression, early.prefixed == prefixWanted { return (earlyMade, false) }
        if earlyMade.raw.isEmpty, !early.prefixed || prefixAllowed { return (earlyMade, true) }
        let index = key.file
        let prefix = prefixWanted ? early.prefix : nil
        let handle = try openIfNeeded(index)
        if earlyMade.raw.isEmpty { diskReads += 1 }
        let (name, offered) = (files[index].source.path, files[index].status)
        let work = await io.run { () -> Result<Made, Failure> in
            Result { () throws(Failure) -> Made in
                var again = earlyMade
                again.prepared.data =
                    earlyMade.raw.isEmpty
                    ? try Self.read(handle, offset: key.offset, count: length, name: name, offered) : earlyMade.raw
                again.prepared.codec = .none
                again.compressSeconds = Self.compress(&again.prepared, compression, prefix: prefix)
                return again
            }
        }
        return (try recorded(work, index), compression != nil)
    }
}
