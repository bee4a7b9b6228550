/// Compresses one chunk, only when that pays: the result is strictly smaller than the raw bytes or there is none.
///
/// Whether to try at all is the compression policy's decision (FerryStateMachines); this type only does it. The
/// output buffer is at most one byte smaller than the input and is never enlarged, so incompressible data costs one
/// bounded attempt and no extra memory; the caller then sends the chunk raw.
public enum ChunkCompressor {
    /// Compresses `raw`; returns nil when the result would not be smaller than raw (the caller sends raw).
    ///
    /// - Parameters:
    ///   - algorithm: `.zlib` is raw deflate (window bits -15, memory level 8); `.zstd` is one zstd frame.
    ///   - level: the compression level, clamped to the algorithm's range; nil means the algorithm's default (1).
    ///   - prefix: zstd only (ignored by zlib): the raw bytes of the file's previous chunk, which the frame's matches
    ///     may reach into; the receiver needs the same bytes to inflate it (`Codec.zstdPrefixed`).
    public static func compress(
        _ raw: UnsafeRawBufferPointer, algorithm: CompressionAlgorithm, level: Int? = nil,
        prefix: UnsafeRawBufferPointer? = nil
    ) -> [UInt8]? {
        guard raw.count >= 2 else { return nil }  // Nothing shorter than one byte can come out.
        let output = UnsafeMutableRawBufferPointer.allocate(byteCount: raw.count - 1, alignment: 1)
        defer { output.deallocate() }
        let level = level ?? algorithm.defaultLevel
        let length: Int?
        switch algorithm {
        case .zlib: length = ZlibCodec.deflate(raw, into: output, level: level)
        case .zstd: length = ZstdCodec.compress(raw, into: output, level: level, prefix: prefix)
        }
        guard let length, length < raw.count else { return nil }
        // Copy out exactly the compressed bytes, so a window of chunks does not keep raw-sized buffers alive.
        return Array(UnsafeRawBufferPointer(rebasing: output[..<length]))
    }

    /// Compresses `raw` (an array or an array slice); see `compress(_:algorithm:level:prefix:)`.
    public static func compress(
        _ raw: some Sequence<UInt8>, algorithm: CompressionAlgorithm, level: Int? = nil
    ) -> [UInt8]? {
        if let result = raw.withContiguousStorageIfAvailable({
            compress(UnsafeRawBufferPointer($0), algorithm: algorithm, level: level)
        }) {
            return result
        }
        return Array(raw).withUnsafeBytes { compress($0, algorithm: algorithm, level: level) }
    }

    /// Compresses `raw` with zstd at `level`, the frame's matches reaching into `prefix` (the raw bytes of the file's
    /// previous chunk): the data of a `Codec.zstdPrefixed` chunk. Nil when it does not shrink.
    public static func compress(_ raw: [UInt8], level: Int, prefix: [UInt8]) -> [UInt8]? {
        raw.withUnsafeBytes { raw in
            prefix.withUnsafeBytes { prefix in compress(raw, algorithm: .zstd, level: level, prefix: prefix) }
        }
    }

    /// A quick test on a sample: compresses the first `sampleLength` (default 64 KiB) bytes with the fastest
    /// algorithm and level (zstd 1, or `algorithm` when given); returns the compressed/raw ratio (1.0 when it
    /// does not shrink, or when there is nothing to sample).
    public static func sampleRatio(
        _ raw: ArraySlice<UInt8>, sampleLength: Int = 65_536, algorithm: CompressionAlgorithm = .zstd
    ) -> Double {
        let sample = raw.prefix(max(sampleLength, 0))
        guard !sample.isEmpty, let compressed = compress(sample, algorithm: algorithm, level: 1) else { return 1.0 }
        return Double(compressed.count) / Double(sample.count)
    }
}
