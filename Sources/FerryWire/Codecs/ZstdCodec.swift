import CZstd

/// One-shot Zstandard compression and bounded decompression: the `.zstd` half of `ChunkCompressor` and
/// `ChunkInflater`.
///
/// A chunk is exactly one zstd frame that records its content size. Decompression is single-shot into the
/// caller's buffer of the declared size: zstd checks each block against the room left and fails as soon as one
/// does not fit, so a bomb stops at the bound, and no window buffer is allocated (the streaming decoder would
/// allocate one as large as the frame header asks).
enum ZstdCodec {
    private static let contentSizeUnknown = UInt64.max
    private static let contentSizeError = UInt64.max - 1
    /// `ZSTD_error_dstSize_tooSmall` from zstd_errors.h (not in the CZstd module; its values are pinned since
    /// v1.3.1). zstd returns an error as the negated code.
    private static let dstSizeTooSmall = 70

    /// Compresses `raw` into `output`; returns the compressed length, or nil when it does not fit in `output`.
    ///
    /// With a `prefix` (the raw bytes of the file's previous chunk), the frame's matches may reach into it
    /// (`ZSTD_CCtx_refPrefix`): the window is made large enough to cover the prefix and the chunk, which level 1
    /// would not do by itself (on a tar of /usr/include, 1 MiB chunks: 5.1x alone, 8.2x with their previous chunk).
    static func compress(
        _ raw: UnsafeRawBufferPointer, into output: UnsafeMutableRawBufferPointer, level: Int,
        prefix: UnsafeRawBufferPointer? = nil
    ) -> Int? {
        guard let outBase = output.baseAddress, !output.isEmpty else { return nil }
        guard let context = ZSTD_createCCtx() else { return nil }
        defer { ZSTD_freeCCtx(context) }
        let clamped = Int32(min(max(level, Int(ZSTD_minCLevel())), Int(ZSTD_maxCLevel())))
        guard ZSTD_isError(ZSTD_CCtx_setParameter(context, ZSTD_c_compressionLevel, clamped)) == 0 else { return nil }
        if let prefix, let base = prefix.baseAddress, !prefix.isEmpty {
            guard
                ZSTD_isError(ZSTD_CCtx_setParameter(context, ZSTD_c_windowLog, windowLog(prefix.count + raw.count)))
                    == 0,
                ZSTD_isError(ZSTD_CCtx_refPrefix(context, base, prefix.count)) == 0
            else { return nil }
        }
        let result = ZSTD_compress2(context, outBase, output.count, raw.baseAddress, raw.count)
        guard ZSTD_isError(result) == 0 else { return nil }
        return result
    }

    /// The smallest window (log2, at least zstd's minimum of 10) that holds `bytes`.
    private static func windowLog(_ bytes: Int) -> Int32 {
        var log: Int32 = 10
        while (1 << log) < bytes, log < 27 { log += 1 }
        return log
    }

    /// Decompresses one zstd frame `data` into exactly `output.count` bytes, or throws. With a `prefix`, the frame's
    /// matches may reach into those bytes (`ZSTD_DCtx_refPrefix`; nothing is copied or allocated for it).
    static func decompress(
        _ data: UnsafeRawBufferPointer, into output: UnsafeMutableRawBufferPointer,
        prefix: UnsafeRawBufferPointer? = nil
    ) throws(CompressionError) {
        guard let source = data.baseAddress, !data.isEmpty else { throw .corrupt("zstd: empty") }
        let frameLength = ZSTD_findFrameCompressedSize(source, data.count)
        guard ZSTD_isError(frameLength) == 0 else { throw .corrupt("zstd: \(errorName(frameLength))") }
        guard frameLength == data.count else {
            throw .corrupt("zstd: \(data.count - min(frameLength, data.count)) bytes after the end of the frame")
        }
        let contentSize = ZSTD_getFrameContentSize(source, data.count)
        guard contentSize != contentSizeError else { throw .corrupt("zstd: bad frame header") }
        guard contentSize == contentSizeUnknown || contentSize == UInt64(output.count) else {
            throw .corrupt("zstd: frame declares \(contentSize) bytes, expected \(output.count)")
        }
        guard let context = ZSTD_createDCtx() else { throw .corrupt("zstd: cannot create a decompression context") }
        defer { ZSTD_freeDCtx(context) }
        if let prefix, let base = prefix.baseAddress, !prefix.isEmpty {
            guard ZSTD_isError(ZSTD_DCtx_refPrefix(context, base, prefix.count)) == 0 else {
                throw .corrupt("zstd: the prefix was refused")
            }
        }
        let written = withUnsafeTemporaryAllocation(byteCount: 1, alignment: 1) { spare in
            // A valid pointer even for an empty output; capacity stays output.count.
            ZSTD_decompressDCtx(context, output.baseAddress ?? spare.baseAddress, output.count, source, data.count)
            // (ZSTD_decompressDCtx uses and then drops the referenced prefix, as ZSTD_compress2 does.)
        }
        guard ZSTD_isError(written) == 0 else {
            if 0 &- written == dstSizeTooSmall {
                throw .corrupt("zstd: inflates past \(output.count) bytes")
            }
            throw .corrupt("zstd: \(errorName(written))")
        }
        guard written == output.count else {
            throw .corrupt("zstd: inflates to \(written) of \(output.count) bytes")
        }
    }

    private static func errorName(_ code: Int) -> String {
        String(cString: ZSTD_getErrorName(code))
    }
}
