import CZstd
import Synchronization

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
        prefix: UnsafeRawBufferPointer? = nil, pool: ZstdContexts.Pool = ZstdContexts.compression
    ) -> Int? {
        guard let outBase = output.baseAddress, !output.isEmpty else { return nil }
        guard let context = pool.take() else { return nil }
        defer { pool.give(context) }
        // A context from the pool still holds the last frame's parameters and prefix.
        guard ZSTD_isError(ZSTD_CCtx_reset(context, ZSTD_reset_session_and_parameters)) == 0 else { return nil }
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
        prefix: UnsafeRawBufferPointer? = nil, pool: ZstdContexts.Pool = ZstdContexts.decompression
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
        guard let context = pool.take() else {
            throw .corrupt("zstd: cannot create a decompression context")
        }
        defer { pool.give(context) }
        guard ZSTD_isError(ZSTD_DCtx_reset(context, ZSTD_reset_session_and_parameters)) == 0 else {
            throw .corrupt("zstd: cannot reset a decompression context")
        }
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

/// zstd contexts kept for the next chunk instead of made and freed for each: a context's tables (1-3 MiB at the
/// levels the controller picks, with a window over prefix and chunk) were allocated with `mmap` and faulted in
/// afresh for every 1 MiB chunk, on both ends.
///
/// A pool, not one context per caller, so that callers need not own one: the sender compresses on its chunk
/// source's serial queue and the receiver inflates on its own, each taking the one context it used last. At most
/// `limit` are kept (a broadcast or several transfers may compress on several threads at once; a context beyond
/// the limit is freed), and none larger than `largest` bytes, so what stays allocated between chunks is bounded.
enum ZstdContexts {
    /// Compression contexts (`ZSTD_CCtx`).
    static let compression = Pool.compression()
    /// Decompression contexts (`ZSTD_DCtx`).
    static let decompression = Pool.decompression()
    /// Contexts kept per kind.
    static let limit = 2
    /// The largest context kept, in bytes (level 8 with a 2 MiB window needs about 10 MiB; larger ones are freed).
    static let largest = 16 << 20

    /// A lock-protected list of idle contexts of one kind.
    final class Pool: Sendable {
        /// An idle context: only the pool holds it, so it may cross threads.
        private struct Idle: @unchecked Sendable { var pointer: OpaquePointer }
        private let idle = Mutex<[Idle]>([])
        private let make: @Sendable () -> OpaquePointer?
        private let size: @Sendable (OpaquePointer) -> Int
        private let free: @Sendable (OpaquePointer) -> Void

        init(
            make: @escaping @Sendable () -> OpaquePointer?, size: @escaping @Sendable (OpaquePointer) -> Int,
            free: @escaping @Sendable (OpaquePointer) -> Void
        ) {
            self.make = make
            self.size = size
            self.free = free
        }

        /// A pool of compression contexts (the process keeps one, `ZstdContexts.compression`; a test makes its own).
        static func compression() -> Pool {
            Pool(make: { ZSTD_createCCtx() }, size: { ZSTD_sizeof_CCtx($0) }, free: { _ = ZSTD_freeCCtx($0) })
        }

        /// A pool of decompression contexts.
        static func decompression() -> Pool {
            Pool(make: { ZSTD_createDCtx() }, size: { ZSTD_sizeof_DCtx($0) }, free: { _ = ZSTD_freeDCtx($0) })
        }

        /// An idle context, or a new one (nil when zstd cannot allocate one).
        func take() -> OpaquePointer? {
            if let kept = idle.withLock({ $0.popLast() }) { return kept.pointer }
            return make()
        }

        /// Gives `context` back: kept for the next caller, or freed when enough are kept or it grew too large.
        func give(_ context: OpaquePointer) {
            let keep = size(context) <= ZstdContexts.largest
            let kept =
                keep
                && idle.withLock { contexts -> Bool in
                    guard contexts.count < ZstdContexts.limit else { return false }
                    contexts.append(Idle(pointer: context))
                    return true
                }
            if !kept { free(context) }
        }

        /// Contexts idle now (a test looks).
        var idleCount: Int { idle.withLock { $0.count } }

        deinit { drain() }

        /// Frees every idle context.
        func drain() {
            for context in idle.withLock({ contexts in
                defer { contexts.removeAll() }; return contexts
            }) {
                free(context.pointer)
            }
        }
    }
}
