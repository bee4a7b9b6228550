import FerryStateMachines
import FerrySystem
import FerryWire
import Foundation

/// Reads, hashes and compresses the chunks of one send operation, each once, whatever the number of peers it goes to.
///
/// Why an actor of its own: a broadcast fans one chunk out to every peer. The peer in front prepares it; the
/// others find it in a small cache (`cacheLimit` bytes), and a peer that fell further behind than the cache is
/// served from disk again, so a slow peer costs re-reading, never unbounded memory. Each chunk's SHA-256 (its chunk
/// digest, sent in the chunk) is computed when the chunk is first read, and feeds the file digest (PROTOCOL.md 11.7:
/// a SHA-256 over the chunk digests, 32 bytes a chunk), which advances with the first pass over the file, so no byte
/// is hashed twice; `digest(of:)` finishes it (reading and hashing, chunk by chunk, what resume skipped). A file sent
/// before and unchanged since comes with its chunk digests kept by that send (`ChunkSource+Kept`, `DigestCache`): it
/// is read, not hashed.
///
/// Every read is followed by an `fstat` of the file, compared with the status taken when it was offered (before its
/// first byte was read): the same device and inode, size, modification time and change time (`FileStatus`
/// `isUnchanged(since:)`). A file written meanwhile, even with its modification time put back (`dd conv=notrunc`
/// then `touch -d`: the change time cannot be put back), fails with `Failure.changed`, and keeps failing for every
/// peer of a broadcast, so no peer is sent a `fileEnd` whose digest would verify a splice of old and new bytes. The
/// same holds for bytes hashed before a resumed peer's offset and for chunks read again for a peer that fell
/// behind. Not seen: writes through a shared memory mapping, which may change neither time (SECURITY.md).
actor ChunkSource {
    struct Prepared: Sendable {
        var rawLength: Int
        var codec: Codec
        /// SHA-256 of the raw bytes (the chunk digest).
        var sha256: [UInt8]
        var data: [UInt8]
        /// The file digest, when this chunk completed the file's first pass and the file was still as offered: the
        /// pump sends the file's `fileEnd` with the chunk, without asking `digest(of:)`.
        var fileDigest: [UInt8]? = nil
    }

    enum Failure: Error, Equatable, Sendable, CustomStringConvertible {
        case readFailed(file: String, reason: String)
        case changed(file: String)

        var description: String {
            switch self {
            case .readFailed(let file, let reason): "\(file) could not be read: \(reason)"
            case .changed(let file):
                "\(file) changed while it was being sent; send it again when it is no longer being written"
            }
        }
    }

    struct Key: Hashable {
        var file: Int
        var offset: UInt64
    }

    struct FileEntry {
        var source: SourceFile
        var offered: OfferedFile
        var alreadyCompressed: Bool
        var status: FerrySystem.FileStatus
        /// A payload's bytes (nil for a file on disk).
        var memory: Data?
        var handle: SourceHandle?
        /// Work on the queue that holds `handle`: it is closed only when none is left.
        var users = 0
        /// The file digest of the chunks of the first pass so far.
        var hasher: FileDigest?
        var hashedUpTo: UInt64 = 0
        var digest: [UInt8]?
        /// The file changed (or could not be read): every later chunk or digest of it fails the same way.
        var failure: Failure?
        /// When its status was taken (`PreparedFile.statedAt`).
        var statedAt: Double = 0
        /// Its chunk digests from the `DigestCache` (32 bytes a chunk): its chunks are read, never hashed, and
        /// `digest` is known from the start (`ChunkSource+Kept`).
        var kept: [UInt8]?
        /// A file with `kept` digests whose last chunk was asked for or queued: once its work is done, the handle
        /// may close (as a file's does once hashed).
        var keptPassDone = false
        /// Its kept digests were forgotten in this send (a peer found them wrong).
        var keptForgotten = false
        /// The chunk digests of a first pass that hashed the whole file, for the `DigestCache` (written by `close`).
        var toKeep: [UInt8]?
    }

    var files: [FileEntry]
    var policy: CompressionPolicy
    private var policyFile = -1
    /// The last chunk prepared: its raw length and the seconds spent compressing it, completed by the pump's
    /// cycle into the policy's `Pace` when the next chunk is asked for.
    private var traceStart: ContinuousClock.Instant?
    private var lastPrepared: (rawBytes: Int, compressSeconds: Double, wireBytes: Int)?
    var cache: [Key: Prepared] = [:]
    /// Where chunk digests are kept between sends (`ChunkSource+Kept`); nil: not kept.
    let digestCache: DigestCache?
    /// Some file came with kept digests: a `corrupt` acknowledgement or a `hashMismatch` asks the source to forget
    /// them (without, the engine does not wait for the source there).
    nonisolated let hasKeptDigests: Bool
    /// The last chunk read or queued (unless it was its file's last), whose raw bytes are the prefix of the file's
    /// next chunk (`ChunkSource+Ahead`).
    var chainTail: ChainTail?
    private var cacheOrder: [Key] = []
    var cacheBytes = 0
    /// The digest of every raw chunk prepared, in a broadcast: a chunk read again for a peer that fell behind the
    /// cache is not hashed (or offered to the compressor) again while its file keeps the time and size it was
    /// offered with.
    var rawDigests: [Key: [UInt8]] = [:]
    let cacheLimit: Int
    let chunkSize: Int
    let io = BlockingIO(label: "ferry.chunk-source")
    /// Where level changes are logged (level 2).
    private let log: (@Sendable (_ level: Int, _ message: String) -> Void)?

    init(
        files: [PreparedFile], chunkSize: Int, policy: CompressionPolicy, cacheLimit: Int,
        digestCache: DigestCache? = nil, log: (@Sendable (_ level: Int, _ message: String) -> Void)? = nil
    ) {
        self.log = log
        self.digestCache = digestCache
        hasKeptDigests = digestCache != nil && files.contains { $0.cachedDigests != nil }
        self.files = files.map { file in
            var entry = FileEntry(
                source: file.source, offered: file.offered, alreadyCompressed: file.alreadyCompressed,
                status: file.status, memory: file.memory, statedAt: file.statedAt)
            if digestCache != nil, let kept = file.cachedDigests {
                entry.kept = kept
                entry.digest = FileDigest.of(chunkDigests: kept)
            }
            return entry
        }
        self.policy = policy
        self.chunkSize = chunkSize
        self.cacheLimit = cacheLimit
    }

    /// The chunk of `file` at `offset` (`length` raw bytes), prepared once for every peer.
    ///
    /// Reading, hashing and compressing happen on `io`, a serial queue: the bookkeeping of what is
    /// hashed is claimed here, in the actor, in the same order as the work reaches the queue. `cycle`: what the
    /// asking pump measured since it asked for its previous chunk (the policy's pace, when that chunk was the
    /// last one prepared here). The peers of a broadcast ask for a chunk at about the same time: a request that
    /// comes while the chunk is being prepared for another peer waits for that work instead of reading it again
    /// (the actor is reentrant across the wait).
    func chunk(
        file index: Int, offset: UInt64, length: Int, cycle: PumpCycle?, prefixAllowed: Bool = false
    ) async throws(Failure) -> Prepared {
        let key = Key(file: index, offset: offset)
        if let failure = files[index].failure { throw failure }
        // A chunk prepared with its previous chunk as prefix goes only to a peer that was sent that previous chunk
        // just before; another peer of a broadcast (resumed elsewhere, gone back) gets it again without.
        if let cached = cache[key] {
            if prefixAllowed || cached.codec != .zstdPrefixed { return cached }
            return try await prepare(key, length: length, cycle: nil, prefixAllowed: false, variant: true)
        }
        if preparing[key] != nil {
            let shared = await withCheckedContinuation {
                (waiter: CheckedContinuation<Result<Prepared, Failure>, Never>) in
                preparing[key, default: []].append(waiter)
            }
            let prepared = try shared.get()
            if prefixAllowed || prepared.codec != .zstdPrefixed { return prepared }
            return try await prepare(key, length: length, cycle: nil, prefixAllowed: false, variant: true)
        }
        preparing[key] = []
        let result: Result<Prepared, Failure>
        do throws(Failure) {
            result = .success(
                try await prepare(key, length: length, cycle: cycle, prefixAllowed: prefixAllowed, variant: false))
        } catch {
            result = .failure(error)
        }
        for waiter in preparing.removeValue(forKey: key) ?? [] { waiter.resume(returning: result) }
        return try result.get()
    }

    /// Chunks being prepared, with the requests from other peers that wait for them.
    private var preparing: [Key: [CheckedContinuation<Result<Prepared, Failure>, Never>]] = [:]
    /// Chunks read from disk (a test looks: the peers of a broadcast share each read).
    var diskReads = 0
    /// The next chunks of a file, prepared on the queue while the pump sends the chunks before them, in order.
    var aheads: [Ahead] = []
    /// The work of each chunk queued ahead, until it is recorded.
    var aheadWorks: [Int: Task<Void, Never>] = [:]
    /// The pump waits for its window: the queue may go deeper than one chunk (`extendAhead`).
    var extending = false
    /// Chunks served from `aheads` or from `together` (a test looks).
    var aheadTaken = 0
    /// Files of one chunk read together with the one asked for, until asked for (`ChunkSource+Together`).
    var together: [Int: Made] = [:]
    var aheadSerial = 0

    /// `variant`: the chunk is cached with its previous chunk as prefix, and this peer may not have that: it is
    /// prepared again, plain zstd at the controller's level (at least 1), neither cached nor counted.
    private func prepare(
        _ key: Key, length: Int, cycle: PumpCycle?, prefixAllowed: Bool, variant: Bool
    ) async throws(Failure) -> Prepared {
        let index = key.file
        let offset = key.offset
        let asked = ContinuousClock.now
        // The chunk prepared ahead, while the one before was on the wire (`ChunkSource+Ahead`).
        if !variant { extending = false }
        let early = variant ? nil : try await takeAhead(key, length: length)
        // A chunk read again for a peer that fell behind goes as it went the first time when that was raw: no
        // second compression attempt, no second hash.
        let knownDigest = early == nil ? rawDigests[key] : nil
        var choice: CompressionPolicy.Choice?
        if variant {
            choice = CompressionPolicy.Choice(.zstd, level: max(policy.controller.level, 1))
        } else if knownDigest == nil {
            if policyFile != index {
                policyFile = index
                policy.fileStarted(
                    alreadyCompressed: files[index].alreadyCompressed,
                    singleChunk: files[index].offered.size <= UInt64(chunkSize))
            }
            var pace: CompressionPolicy.Pace?
            if let prepared = lastPrepared, let cycle {
                pace = CompressionPolicy.Pace(
                    rawBytes: prepared.rawBytes, seconds: cycle.seconds, waitedSeconds: cycle.waitedSeconds,
                    compressSeconds: prepared.compressSeconds, inFlightBytes: cycle.inFlightBytes,
                    wireBytes: prepared.wireBytes, receiverWaitedSeconds: cycle.receiverWaitedSeconds)
            }
            let level = policy.controller.level
            choice = policy.choice(after: pace)
            if policy.controller.level != level, let log, let epoch = policy.controller.lastEpoch {
                log(
                    2,
                    "compression level \(level) -> \(policy.controller.level): "
                        + "\(Int(epoch.throughput / 1e6)) MB/s, waited for the link \(Int(epoch.waited * 100))%, "
                        + "for the receiver \(Int(epoch.receiverWaited * 100))%")
            }
        }
        let compression = choice
        files[index].users += 1
        defer { release(index) }
        let made: Made
        var compressedAgain = false
        if let early, let earlyMade = early.made {
            (made, compressedAgain) = try await use(
                early, earlyMade, key, length: length, compression: compression, prefixAllowed: prefixAllowed)
        } else if !variant, knownDigest == nil,
            let read = try await takeTogether(key, length: length, compression: compression)
        {
            (made, compressedAgain) = read
            if aheads.isEmpty { chainTail = nil }  // a whole file: nothing of it follows
        } else {
            diskReads += 1
            let handle = try openIfNeeded(index)
            let hash = claimHash(index, through: offset + UInt64(length))
            let kept = keptDigest(index, offset: offset, length: length)
            // The prefix: the raw bytes of the file's previous chunk, when this peer was sent that chunk just before
            // and it is still at hand (the last chunk read); else plain zstd, which every receiver can inflate.
            let prefix: [UInt8]? =
                if prefixAllowed, compression?.algorithm == .zstd, offset >= UInt64(chunkSize),
                    let tail = chainTail, tail.key == Key(file: index, offset: offset - UInt64(chunkSize))
                { tail.relay.peek() } else { nil }
            let name = files[index].source.path
            let chunkSize = self.chunkSize
            let offered = files[index].status
            // The chunk that completes the first pass also finishes the digest, saving a trip to the queue per file.
            let completesHash = hash != nil && offset + UInt64(length) == offered.size
            let work = await io.run { () -> Result<Made, Failure> in
                Result { () throws(Failure) -> Made in
                    try Self.make(
                        handle, offset: offset, length: length, hash: hash, knownDigest: knownDigest ?? kept,
                        compression: compression, prefix: prefix, completesHash: completesHash, name: name,
                        chunkSize: chunkSize, offered)
                }
            }
            made = try recorded(work, index)
            recordDigest(made, index)
            // The prefix of the file's next chunk, whoever asks for it, unless chunks queued ahead go on from another.
            if !variant, aheads.isEmpty {
                chainTail =
                    offset + UInt64(length) < files[index].offered.size
                    ? ChainTail(
                        key: key, length: length, relay: RawRelay(made.raw), prefixed: prefixAllowed || offset == 0)
                    : nil
            }
        }
        var prepared = made.prepared
        if files[index].digest != nil, made.digest != nil || endsKeptPass(key, length: length) {
            prepared.fileDigest = files[index].digest
        }
        if variant { return prepared }
        if let log {
            let now = ContinuousClock.now
            let start = traceStart ?? asked
            traceStart = start
            let ms = { (d: Double) in String(Int((d * 1e4).rounded()) / 10) }
            log(
                3,
                "chunk \(offset >> 20) at \(ms(Self.seconds(now - start))) ms: level \(compression?.level ?? 0), "
                    + "wire \(prepared.data.count >> 10) KiB, compress \(ms(made.compressSeconds)) ms, "
                    + "ready after \(ms(Self.seconds(now - asked))) ms\(early == nil ? " (not ahead)" : ""); "
                    + "cycle before \(ms(cycle?.seconds ?? 0)) ms, waited \(ms(cycle?.waitedSeconds ?? 0)) ms, "
                    + "in flight \((cycle?.inFlightBytes ?? 0) >> 20) MiB")
        }
        if compression != nil {
            policy.record(rawLength: length, compressedLength: prepared.codec == .none ? nil : prepared.data.count)
        }
        // A chunk read again says nothing of the policy's choices: the next pace is not counted. Nor does one
        // compressed again because the level moved after it was compressed ahead: its cycle holds both
        // compressions (on a loaded machine one such chunk at level 2 took 58 ms against 26 for level 3's
        // epoch, and ended the settling at once: "more than twice as slow", back to 3).
        lastPrepared =
            knownDigest == nil && !compressedAgain ? (length, made.compressSeconds, prepared.data.count) : nil
        if prepared.codec == .none, cacheLimit > 0 { rawDigests[key] = prepared.sha256 }
        remember(key, prepared)
        // The next chunks of the file, prepared while this one is on the wire: with their prefix when this chunk went
        // with one, or is the file's first (its successor's previous chunk is then this one).
        if knownDigest == nil { fillAhead() }
        return prepared
    }

    /// Records the file digest that a chunk's work finished (or the failure of finishing it).
    func recordDigest(_ made: Made, _ index: Int) {
        guard let digest = made.digest else { return }
        if case .success = digest { keep(files[index].hasher, index) }
        files[index].hasher = nil
        switch digest {
        case .success(let bytes): files[index].digest = bytes
        case .failure(let failure): files[index].failure = failure
        }
    }

    static func seconds(_ duration: Duration) -> Double {
        Double(duration.components.seconds) + Double(duration.components.attoseconds) / 1e18
    }

    /// The file digest of a whole file, after checking that it still has the size and time it was offered with.
    func digest(of index: Int) async throws(Failure) -> [UInt8] {
        await settleAhead()  // it may have finished the digest
        if let failure = files[index].failure { throw failure }
        if let digest = files[index].digest { return digest }
        let handle = try openIfNeeded(index)
        let size = files[index].offered.size
        let offered = files[index].status
        let name = files[index].source.path
        let chunkSize = self.chunkSize
        // Normally the first pass hashed everything; a resend that overtook it means hashing from the start.
        let hash = claimHash(index, through: size) ?? (from: 0, hasher: FileDigest(keepingChunkDigests: keeps(index)))
        files[index].users += 1
        defer { release(index) }
        let work = await io.run { () -> Result<[UInt8], Failure> in
            Result { () throws(Failure) -> [UInt8] in
                try Self.hash(handle, hash.from..<size, into: hash.hasher, name: name, chunkSize: chunkSize, offered)
                return try Self.finish(hash.hasher, handle, offered, name)
            }
        }
        let digest = try recorded(work, index)
        files[index].digest = digest
        keep(hash.hasher, index)
        files[index].hasher = nil
        return digest
    }

    /// The value of `work`, or its failure, which is kept as the file's: every later chunk or digest of the file fails
    /// with it, for every peer.
    func recorded<T>(_ work: Result<T, Failure>, _ index: Int) throws(Failure) -> T {
        switch work {
        case .success(let value):
            return value
        case .failure(let failure):
            files[index].failure = files[index].failure ?? failure
            files[index].hasher = nil
            throw failure
        }
    }

    /// One piece of work with the file's handle is over; once the file is hashed and nothing uses the handle, it
    /// is closed (a later resend opens it again), so a transfer of many files keeps few descriptors open.
    func release(_ index: Int) {
        files[index].users -= 1
        guard files[index].users == 0, files[index].digest != nil,
            files[index].kept == nil || files[index].keptPassDone, let handle = files[index].handle
        else { return }
        files[index].handle = nil
        handle.close()
    }

    /// What went wrong with a file, for the user ("" if nothing did).
    func failureText(of index: Int) -> String {
        files[index].failure?.description ?? ""
    }

    /// Closes every file still open, once the chunks being prepared ahead are done with their files.
    func close() async {
        chainTail = nil  // nothing more is queued ahead
        await settleAhead()
        for index in files.indices {
            files[index].handle?.close()
            files[index].handle = nil
        }
        cache.removeAll()
        together.removeAll()
        await storeKept()
    }

    /// Claims the hashing of `[hashedUpTo, end)` of a file when that continues its first pass; nil when the bytes
    /// are already hashed (a resend, or another peer's chunk).
    func claimHash(_ index: Int, through end: UInt64) -> (from: UInt64, hasher: FileDigest)? {
        guard files[index].digest == nil, end > files[index].hashedUpTo else { return nil }
        let hasher = files[index].hasher ?? FileDigest(keepingChunkDigests: keeps(index))
        files[index].hasher = hasher
        let from = files[index].hashedUpTo
        files[index].hashedUpTo = end
        return (from, hasher)
    }

    func openIfNeeded(_ index: Int) throws(Failure) -> SourceHandle {
        if let handle = files[index].handle { return handle }
        let name = files[index].source.path
        do {
            let handle = try SourceHandle.open(path: name, memory: files[index].memory, status: files[index].status)
            // Read-ahead helps a file of several chunks; a file of one chunk is read by one `pread` anyway.
            if files[index].status.size > UInt64(chunkSize) { handle.adviseSequential() }
            files[index].handle = handle
            return handle
        } catch {
            throw .readFailed(file: name, reason: "\(error)")
        }
    }

    /// The digest, once the file is checked to be as it was offered (every byte hashed was read while it was).
    static func finish(
        _ hasher: FileDigest, _ handle: SourceHandle, _ offered: FerrySystem.FileStatus, _ name: String
    ) throws(Failure) -> [UInt8] {
        try checkUnchanged(handle, offered, name)
        return hasher.finalize()
    }

    /// Throws `.changed` unless the open file still is the one offered, unwritten since (`isUnchanged(since:)`).
    private static func checkUnchanged(
        _ handle: SourceHandle, _ offered: FerrySystem.FileStatus, _ name: String
    ) throws(Failure) {
        let now: FerrySystem.FileStatus
        do { now = try handle.status() } catch { throw .readFailed(file: name, reason: "\(error)") }
        guard now.isUnchanged(since: offered) else { throw .changed(file: name) }
    }

    /// Adds the chunks of `range` (from a chunk boundary: where the first pass stopped, or 0) to the file digest.
    static func hash(
        _ handle: SourceHandle, _ range: Range<UInt64>, into hasher: FileDigest, name: String, chunkSize: Int,
        _ offered: FerrySystem.FileStatus
    ) throws(Failure) {
        var offset = range.lowerBound
        while offset < range.upperBound {
            let count = Int(min(UInt64(chunkSize), range.upperBound - offset))
            let bytes = try read(handle, offset: offset, count: count, name: name, offered)
            bytes.withUnsafeBytes { _ = hasher.add(chunk: $0) }
            offset += UInt64(count)
        }
    }

    /// `count` bytes at `offset`, read while the file was as offered: checked after the read, so bytes written
    /// before or during it show as a change.
    static func read(
        _ handle: SourceHandle, offset: UInt64, count: Int, name: String, _ offered: FerrySystem.FileStatus
    ) throws(Failure) -> [UInt8] {
        let bytes: [UInt8]
        do {
            bytes = try handle.read(count: count, at: offset)
        } catch {
            throw .readFailed(file: name, reason: "\(error)")
        }
        guard bytes.count == count else { throw .changed(file: name) }
        try checkUnchanged(handle, offered, name)
        return bytes
    }

    private func remember(_ key: Key, _ prepared: Prepared) {
        cache[key] = prepared
        cacheOrder.append(key)
        cacheBytes += prepared.data.count
        while cacheBytes > cacheLimit, !cacheOrder.isEmpty {
            let oldest = cacheOrder.removeFirst()
            if let removed = cache.removeValue(forKey: oldest) { cacheBytes -= removed.data.count }
        }
    }
}

/// What a pump measured between asking for one chunk and asking for the next: the policy's pace, with the
/// chunk source's own figures (`CompressionLevelController.Pace`).
struct PumpCycle: Sendable {
    /// The whole cycle.
    var seconds: Double
    /// Of those, waiting for the link: the window full, or the link writer above its high-water mark.
    var waitedSeconds: Double
    /// Raw bytes in flight (sent, not acknowledged) once the chunk was queued.
    var inFlightBytes: Int
    /// Of `waitedSeconds`, waiting for the window while the link held (next to) nothing unacknowledged: waiting
    /// for the receiving process (`CompressionLevelController.Pace.receiverWaitedSeconds`).
    var receiverWaitedSeconds: Double = 0
}
