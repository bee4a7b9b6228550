import FerryStateMachines
import FerrySystem
import FerryWire

/// Reads, compresses and checksums the chunks of one send operation, and hashes each file once, whatever the
/// number of peers it goes to.
///
/// Why an actor of its own: a broadcast fans one chunk out to every peer. The peer in front prepares it; the
/// others find it in a small cache (`cacheLimit` bytes), and a peer that fell further behind than the cache is
/// served from disk again, so a slow peer costs re-reading, never unbounded memory. The SHA-256 of a file advances
/// with the first pass over it; `digest(of:)` finishes it (reading what resume skipped) and checks that the file did
/// not change since it was offered.
actor ChunkSource {
    struct Prepared: Sendable {
        var rawLength: Int
        var codec: Codec
        var crc32: UInt32
        var data: [UInt8]
    }

    enum Failure: Error, Equatable, Sendable, CustomStringConvertible {
        case readFailed(file: String, reason: String)
        case changed(file: String)

        var description: String {
            switch self {
            case .readFailed(let file, let reason): "\(file) could not be read: \(reason)"
            case .changed(let file): "\(file) changed while it was being sent"
            }
        }
    }

    private struct Key: Hashable {
        var file: Int
        var offset: UInt64
    }

    private struct FileEntry {
        var source: SourceFile
        var offered: OfferedFile
        var alreadyCompressed: Bool
        var status: FerrySystem.FileStatus
        var handle: RegularFile?
        var hasher: SHA256Hasher?
        var hashedUpTo: UInt64 = 0
        var digest: [UInt8]?
    }

    private var files: [FileEntry]
    private var policy: CompressionPolicy
    private var policyFile = -1
    private var cache: [Key: Prepared] = [:]
    private var cacheOrder: [Key] = []
    private var cacheBytes = 0
    private let cacheLimit: Int
    private let chunkSize: Int
    /// Raw and wire bytes of every chunk prepared, for the compression ratio.
    private(set) var preparedRawBytes: UInt64 = 0
    private(set) var preparedWireBytes: UInt64 = 0

    init(files: [PreparedFile], chunkSize: Int, policy: CompressionPolicy, cacheLimit: Int = 32 << 20) {
        self.files = files.map { file in
            FileEntry(
                source: file.source, offered: file.offered, alreadyCompressed: file.alreadyCompressed,
                status: file.status)
        }
        self.policy = policy
        self.chunkSize = chunkSize
        self.cacheLimit = cacheLimit
    }

    /// The chunk of `file` at `offset` (`length` raw bytes), prepared once for every peer.
    func chunk(file index: Int, offset: UInt64, length: Int, linkBound: Bool) throws(Failure) -> Prepared {
        let key = Key(file: index, offset: offset)
        if let cached = cache[key] { return cached }
        try catchUpHash(index, to: offset)
        let raw = try read(index, offset: offset, count: length)
        if files[index].hashedUpTo == offset {
            raw.withUnsafeBytes { files[index].hasher?.update($0) }
            files[index].hashedUpTo += UInt64(length)
        }
        if policyFile != index {
            policyFile = index
            policy.fileStarted(alreadyCompressed: files[index].alreadyCompressed)
        }
        let crc = raw.withUnsafeBytes { CRC32.update(0, $0) }
        var prepared = Prepared(rawLength: length, codec: .none, crc32: crc, data: raw)
        if let algorithm = policy.algorithm(forChunk: Int(offset / UInt64(chunkSize)), linkBound: linkBound) {
            let compressed = ChunkCompressor.compress(raw[...], algorithm: algorithm)
            policy.record(rawLength: length, compressedLength: compressed?.count)
            if let compressed {
                prepared.data = compressed
                prepared.codec = algorithm == .zstd ? .zstd : .zlib
            }
        }
        preparedRawBytes += UInt64(length)
        preparedWireBytes += UInt64(prepared.data.count)
        remember(key, prepared)
        return prepared
    }

    /// The SHA-256 of a whole file, after checking that it still has the size and time it was offered with.
    func digest(of index: Int) throws(Failure) -> [UInt8] {
        if let digest = files[index].digest { return digest }
        let size = files[index].offered.size
        try catchUpHash(index, to: size)
        guard let hasher = files[index].hasher, files[index].hashedUpTo == size else {
            // Chunks were prepared out of order (a re-send overtook the first pass): hash from the start.
            files[index].hasher = SHA256Hasher()
            files[index].hashedUpTo = 0
            try catchUpHash(index, to: size)
            return try finish(index)
        }
        _ = hasher
        return try finish(index)
    }

    private func finish(_ index: Int) throws(Failure) -> [UInt8] {
        let name = files[index].source.path
        guard let hasher = files[index].hasher else { throw .readFailed(file: name, reason: "no hash state") }
        let digest = hasher.finalize()
        files[index].hasher = nil
        if let handle = files[index].handle {
            let now: FerrySystem.FileStatus
            do { now = try handle.status() } catch { throw .readFailed(file: name, reason: "\(error)") }
            guard now.size == files[index].status.size,
                now.modificationTime == files[index].status.modificationTime
            else { throw .changed(file: name) }
            handle.close()
            files[index].handle = nil
        }
        files[index].digest = digest
        return digest
    }

    /// Closes every file still open.
    func close() {
        for index in files.indices {
            files[index].handle?.close()
            files[index].handle = nil
        }
        cache.removeAll()
    }

    private func catchUpHash(_ index: Int, to offset: UInt64) throws(Failure) {
        if files[index].hasher == nil, files[index].digest == nil, files[index].hashedUpTo == 0 {
            files[index].hasher = SHA256Hasher()
        }
        while files[index].hashedUpTo < offset, files[index].hasher != nil {
            let start = files[index].hashedUpTo
            let count = Int(min(UInt64(chunkSize), offset - start))
            let bytes = try read(index, offset: start, count: count)
            bytes.withUnsafeBytes { files[index].hasher?.update($0) }
            files[index].hashedUpTo += UInt64(count)
        }
    }

    private func read(_ index: Int, offset: UInt64, count: Int) throws(Failure) -> [UInt8] {
        let name = files[index].source.path
        do {
            if files[index].handle == nil {
                let handle = try RegularFile.open(path: name)
                handle.adviseSequential()
                files[index].handle = handle
            }
            guard let handle = files[index].handle else { throw Failure.readFailed(file: name, reason: "not open") }
            let bytes = try handle.read(count: count, at: offset)
            guard bytes.count == count else { throw Failure.changed(file: name) }
            return bytes
        } catch let failure as Failure {
            throw failure
        } catch {
            throw .readFailed(file: name, reason: "\(error)")
        }
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

/// A file ready to be offered: its local source, what the offer says of it, and what its first bytes showed.
struct PreparedFile: Sendable {
    var source: SourceFile
    var offered: OfferedFile
    var alreadyCompressed: Bool
    var status: FerrySystem.FileStatus

    /// Stats the file and sniffs its first 64 KiB for the media type, image size and compressibility.
    static func prepare(_ source: SourceFile) throws(TransferError) -> PreparedFile {
        do {
            let handle = try RegularFile.open(path: source.path)
            defer { handle.close() }
            let status = try handle.status()
            guard status.kind == .regular else { throw TransferError.notReadable(source.path, reason: "not a regular file") }
            let prefix = try handle.read(count: Int(min(status.size, 65_536)), at: 0)
            let media = MediaSniffer.sniff(prefix[...])
            let offered = OfferedFile(
                path: source.name, size: status.size, permissions: status.permissions & 0o777,
                modificationTime: FileTime(
                    seconds: status.modificationTime.seconds, nanoseconds: status.modificationTime.nanoseconds),
                mediaType: media.mediaType ?? "", pixelWidth: media.pixelWidth, pixelHeight: media.pixelHeight)
            return PreparedFile(source: source, offered: offered, alreadyCompressed: media.isCompressed, status: status)
        } catch let error as TransferError {
            throw error
        } catch {
            throw .notReadable(source.path, reason: "\(error)")
        }
    }
}
