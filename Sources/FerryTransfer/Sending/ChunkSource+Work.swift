import FerryStateMachines
import FerrySystem
import FerryWire

/// The work on the chunk source's queue for one chunk, prepared on request or ahead (`ChunkSource+Ahead`).
extension ChunkSource {
    /// What the work on the queue gives for one chunk: the chunk, its raw bytes (the next chunk's prefix), the
    /// seconds spent compressing, and the file digest when the chunk completed the file's first pass.
    struct Made: Sendable {
        var prepared: Prepared
        var raw: [UInt8]
        var compressSeconds = 0.0
        var digest: Result<[UInt8], Failure>?
    }

    /// Reads, hashes (continuing the first pass: `hash`, else the chunk alone) and compresses one chunk, on the queue.
    static func make(
        _ handle: SourceHandle, offset: UInt64, length: Int, hash: (from: UInt64, hasher: FileDigest)?,
        knownDigest: [UInt8]?, compression: CompressionPolicy.Choice?, prefix: [UInt8]?, completesHash: Bool,
        name: String, chunkSize: Int, _ offered: FerrySystem.FileStatus
    ) throws(Failure) -> Made {
        if let hash {
            try Self.hash(handle, hash.from..<offset, into: hash.hasher, name: name, chunkSize: chunkSize, offered)
        }
        let raw = try Self.read(handle, offset: offset, count: length, name: name, offered)
        // The first pass hashes each chunk once, for the chunk and the file digest alike. The file is as offered
        // after this read (checked by `read`): a chunk read again has the bytes it had.
        let digest =
            if let hash { raw.withUnsafeBytes { hash.hasher.add(chunk: $0) } } else {
                knownDigest ?? FileDigest.chunkDigest(raw)
            }
        var made = Made(prepared: Prepared(rawLength: length, codec: .none, sha256: digest, data: raw), raw: raw)
        made.compressSeconds = compress(&made.prepared, compression, prefix: prefix)
        guard completesHash, let hash else { return made }
        // No `finish` (and its `fstat`): `read` checked the file after this chunk, the last byte hashed, was read.
        made.digest = .success(hash.hasher.finalize())
        return made
    }

    /// Compresses the raw chunk in `prepared` as `compression` says (nil: leaves it raw), with `prefix` (the file's
    /// previous chunk) when given; the seconds it took. A chunk that does not shrink stays raw.
    static func compress(
        _ prepared: inout Prepared, _ compression: CompressionPolicy.Choice?, prefix: [UInt8]?
    ) -> Double {
        guard let compression else { return 0 }
        let clock = ContinuousClock()
        let started = clock.now
        let raw = prepared.data
        let compressed =
            if let prefix {
                ChunkCompressor.compress(raw, level: compression.level, prefix: prefix)
            } else {
                ChunkCompressor.compress(raw[...], algorithm: compression.algorithm, level: compression.level)
            }
        let seconds = Self.seconds(clock.now - started)
        if let compressed {
            prepared.data = compressed
            prepared.codec = compression.algorithm == .zlib ? .zlib : prefix != nil ? .zstdPrefixed : .zstd
        }
        return seconds
    }
}
