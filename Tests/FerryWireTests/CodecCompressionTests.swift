import FerryTestSupport
import CZlib
import CZstd
import Glibc
import Testing

@testable import FerryWire

@Suite("Codec compression")
struct CodecCompressionTests {
    static let text = Array(
        String(repeating: "ferry moves files between peers; chunks are compressed where it pays. ", count: 400).utf8)

    static func random(_ count: Int, seed: UInt64) -> [UInt8] {
        var generator = SplitMix64(seed: seed)
        return generator.bytes(count: count)
    }

    static func isCorrupt(_ error: any Error, containing fragment: String) -> Bool {
        guard case .corrupt(let what) = error as? CompressionError else { return false }
        return what.contains(fragment)
    }

    @Test(arguments: CompressionAlgorithm.allCases)
    func textRoundTrips(algorithm: CompressionAlgorithm) throws {
        let compressed = try #require(ChunkCompressor.compress(Self.text, algorithm: algorithm))
        #expect(compressed.count < Self.text.count / 10)
        #expect(try ChunkInflater.inflate(compressed, algorithm: algorithm, rawLength: Self.text.count) == Self.text)
        // The slice and raw-buffer entry points agree.
        #expect(ChunkCompressor.compress(Self.text[...], algorithm: algorithm) == compressed)
        #expect(Self.text.withUnsafeBytes { ChunkCompressor.compress($0, algorithm: algorithm) } == compressed)
    }

    /// A chunk compressed with its file's previous chunk as prefix (`Codec.zstdPrefixed`): matches reach into the
    /// prefix, so random bytes that repeat the previous chunk shrink to almost nothing, where the chunk alone does
    /// not shrink at all; it inflates only with that same prefix, and never past its declared length.
    @Test(arguments: [1, 3, 8])
    func prefixedRoundTrips(level: Int) throws {
        let previous = Self.random(65_536, seed: 7)
        let raw = Array(previous[1000...]) + Self.random(1000, seed: 8)
        #expect(ChunkCompressor.compress(raw, algorithm: .zstd, level: level) == nil)
        let compressed = try #require(ChunkCompressor.compress(raw, level: level, prefix: previous))
        #expect(compressed.count < 2000)
        #expect(try ChunkInflater.inflate(compressed[...], rawLength: raw.count, prefix: previous[...]) == raw)
        // Another prefix gives other bytes (caught by the chunk digest) or fails; none gives no output at all.
        let other = try? ChunkInflater.inflate(
            compressed[...], rawLength: raw.count, prefix: Self.random(65_536, seed: 9)[...])
        #expect(other != raw)
        #expect(throws: CompressionError.self) {
            try ChunkInflater.inflate(compressed, algorithm: .zstd, rawLength: raw.count)
        }
        #expect(throws: CompressionError.self) {
            try ChunkInflater.inflate(compressed[...], rawLength: raw.count - 1, prefix: previous[...])
        }
        #expect(throws: CompressionError.self) {
            try ChunkInflater.inflate(compressed[...], rawLength: raw.count + 1, prefix: previous[...])
        }
    }

    @Test(arguments: CompressionAlgorithm.allCases)
    func everyLevelRoundTrips(algorithm: CompressionAlgorithm) throws {
        for level in [-1_000_000, -5, 0, 1, 3, 9, 19, 1_000_000] {
            // The fastest negative zstd levels may not shrink the text at all; whatever comes out must round-trip.
            let compressed = ChunkCompressor.compress(Self.text, algorithm: algorithm, level: level)
            #expect(compressed != nil || level < 1)  // zlib level 0 only stores.
            if let compressed {
                #expect(
                    try ChunkInflater.inflate(compressed, algorithm: algorithm, rawLength: Self.text.count) == Self.text
                )
            }
        }
    }

    @Test(arguments: CompressionAlgorithm.allCases)
    func randomDataIsNotCompressed(algorithm: CompressionAlgorithm) {
        for count in [2, 100, 65_536, 1 << 20] {
            #expect(ChunkCompressor.compress(Self.random(count, seed: UInt64(count)), algorithm: algorithm) == nil)
        }
        #expect(ChunkCompressor.compress([UInt8](), algorithm: algorithm) == nil)
        #expect(ChunkCompressor.compress([0], algorithm: algorithm) == nil)
    }

    @Test(arguments: CompressionAlgorithm.allCases)
    func mixedDataRoundTrips(algorithm: CompressionAlgorithm) throws {
        let raw = Self.text + Self.random(5000, seed: 3) + [UInt8](repeating: 0, count: 100_000)
        let compressed = try #require(ChunkCompressor.compress(raw, algorithm: algorithm))
        #expect(try ChunkInflater.inflate(compressed[...], algorithm: algorithm, rawLength: raw.count) == raw)
    }

    @Test func sampleRatio() {
        #expect(ChunkCompressor.sampleRatio(Self.text[...]) < 0.1)
        #expect(ChunkCompressor.sampleRatio(Self.text[...], algorithm: .zlib) < 0.1)
        #expect(ChunkCompressor.sampleRatio(Self.random(100_000, seed: 4)[...]) == 1.0)
        #expect(ChunkCompressor.sampleRatio([UInt8]()[...]) == 1.0)
        #expect(ChunkCompressor.sampleRatio(Self.text[...], sampleLength: -1) == 1.0)
        // Only the sample counts: text after 64 KiB of random bytes is not seen.
        #expect(ChunkCompressor.sampleRatio((Self.random(65_536, seed: 5) + Self.text)[...]) == 1.0)
    }

    @Test(arguments: CompressionAlgorithm.allCases)
    func wrongDeclaredLengthIsCorrupt(algorithm: CompressionAlgorithm) throws {
        let compressed = try #require(ChunkCompressor.compress(Self.text, algorithm: algorithm))
        let longer = algorithm == .zlib ? "inflates to" : "frame declares"
        #expect {
            try ChunkInflater.inflate(compressed, algorithm: algorithm, rawLength: Self.text.count + 1)
        } throws: {
            Self.isCorrupt($0, containing: longer)
        }
        let shorter = algorithm == .zlib ? "inflates past" : "frame declares"
        #expect {
            try ChunkInflater.inflate(compressed, algorithm: algorithm, rawLength: Self.text.count - 1)
        } throws: {
            Self.isCorrupt($0, containing: shorter)
        }
        #expect(throws: CompressionError.self) {
            try ChunkInflater.inflate(compressed, algorithm: algorithm, rawLength: 0)
        }
        #expect(throws: CompressionError.corrupt("negative raw length -1")) {
            try ChunkInflater.inflate(compressed, algorithm: algorithm, rawLength: -1)
        }
    }

    @Test(arguments: CompressionAlgorithm.allCases)
    func everyTruncatedPrefixIsCorrupt(algorithm: CompressionAlgorithm) throws {
        let raw = Array(Self.text.prefix(3000)) + Self.random(200, seed: 6)
        let compressed = try #require(ChunkCompressor.compress(raw, algorithm: algorithm))
        for length in 0..<compressed.count {
            #expect(throws: CompressionError.self) {
                try ChunkInflater.inflate(compressed[..<length], algorithm: algorithm, rawLength: raw.count)
            }
        }
    }

    @Test(arguments: CompressionAlgorithm.allCases)
    func trailingInputIsCorrupt(algorithm: CompressionAlgorithm) throws {
        let compressed = try #require(ChunkCompressor.compress(Self.text, algorithm: algorithm))
        for trailer: [UInt8] in [[0], [0xFF, 0xFF, 0xFF], compressed] {
            #expect {
                try ChunkInflater.inflate(compressed + trailer, algorithm: algorithm, rawLength: Self.text.count)
            } throws: { Self.isCorrupt($0, containing: "after the end") }
        }
    }

    @Test(arguments: CompressionAlgorithm.allCases)
    func emptyAndGarbageInputIsCorrupt(algorithm: CompressionAlgorithm) {
        for rawLength in [0, 1, 100] {
            #expect(throws: CompressionError.self) {
                try ChunkInflater.inflate([UInt8](), algorithm: algorithm, rawLength: rawLength)
            }
            #expect(throws: CompressionError.self) {
                try ChunkInflater.inflate(Self.random(100, seed: 7), algorithm: algorithm, rawLength: rawLength)
            }
        }
    }

    /// An empty chunk is never sent compressed, but a peer may: a valid empty stream inflates to nothing.
    @Test func emptyStreamsInflateToNothing() throws {
        #expect(try ChunkInflater.inflate([0x03, 0x00], algorithm: .zlib, rawLength: 0) == [])
        let emptyFrame = try Self.zstdFrame(zeros: 0, pledged: true)
        #expect(try ChunkInflater.inflate(emptyFrame, algorithm: .zstd, rawLength: 0) == [])
    }

    static let bombLength = 256 << 20
    static let declaredLength = 1 << 20

    /// `bombLength` zeros as raw deflate, built by streaming a small buffer so the test itself stays small.
    static func zlibBomb() throws -> [UInt8] {
        let stream = UnsafeMutablePointer<z_stream>.allocate(capacity: 1)
        stream.initialize(to: z_stream())
        defer {
            deflateEnd(stream)
            stream.deinitialize(count: 1)
            stream.deallocate()
        }
        let size = Int32(MemoryLayout<z_stream>.size)
        try #require(deflateInit2_(stream, 9, Z_DEFLATED, -15, 9, Z_DEFAULT_STRATEGY, zlibVersion(), size) == Z_OK)
        var zeros = [UInt8](repeating: 0, count: 1 << 20)
        var output = [UInt8](repeating: 0, count: 1 << 20)
        var produced = 0
        for round in 0..<(bombLength >> 20) {
            let flush = round == (bombLength >> 20) - 1 ? Z_FINISH : Z_NO_FLUSH
            zeros.withUnsafeMutableBufferPointer { input in
                stream.pointee.next_in = input.baseAddress
                stream.pointee.avail_in = uInt(input.count)
                output.withUnsafeMutableBufferPointer { out in
                    stream.pointee.next_out = out.baseAddress.map { $0 + produced }
                    stream.pointee.avail_out = uInt(out.count - produced)
                    _ = deflate(stream, flush)
                    produced = out.count - Int(stream.pointee.avail_out)
                }
            }
            try #require(stream.pointee.avail_in == 0)
        }
        return Array(output[..<produced])
    }

    /// `zeros` zero bytes as one zstd frame, with or without the content size in its header.
    static func zstdFrame(zeros: Int, pledged: Bool) throws -> [UInt8] {
        let context = try #require(ZSTD_createCCtx())
        defer { ZSTD_freeCCtx(context) }
        if pledged { try #require(ZSTD_isError(ZSTD_CCtx_setPledgedSrcSize(context, UInt64(zeros))) == 0) }
        // Fed in pieces (the first with ZSTD_e_continue), so zstd cannot know the total unless it is pledged.
        let piece = [UInt8](repeating: 0, count: min(zeros, 1 << 16))
        var output = [UInt8](repeating: 0, count: 1 << 20)
        var produced = 0
        var left = zeros
        repeat {
            let count = min(left, piece.count)
            left -= count
            var remaining = 0
            piece.withUnsafeBytes { input in
                output.withUnsafeMutableBytes { out in
                    var inBuffer = ZSTD_inBuffer(src: input.baseAddress, size: count, pos: 0)
                    var outBuffer = ZSTD_outBuffer(dst: out.baseAddress, size: out.count, pos: produced)
                    remaining = ZSTD_compressStream2(
                        context, &outBuffer, &inBuffer, left == 0 ? ZSTD_e_end : ZSTD_e_continue)
                    produced = outBuffer.pos
                }
            }
            try #require(ZSTD_isError(remaining) == 0)
            try #require(left > 0 || remaining == 0)
        } while left > 0
        return Array(output[..<produced])
    }

    static func maxResidentKiB() -> Int {
        var usage = rusage()
        getrusage(__rusage_who_t(RUSAGE_SELF.rawValue), &usage)
        return usage.ru_maxrss
    }

    /// 256 MiB of zeros declared as 1 MiB: refused as soon as the 1 MiB is full, and the process's peak memory
    /// barely moves (the bound is 64 MiB so that other tests running in parallel cannot make this one fail).
    @Test func zlibBombIsRefusedWithinItsDeclaredLength() throws {
        let bomb = try Self.zlibBomb()
        #expect(bomb.count < 1 << 20)
        let before = Self.maxResidentKiB()
        #expect { try ChunkInflater.inflate(bomb, algorithm: .zlib, rawLength: Self.declaredLength) } throws: {
            Self.isCorrupt($0, containing: "inflates past 1048576 bytes")
        }
        #expect(Self.maxResidentKiB() - before < 64 << 10)
    }

    @Test func zstdBombIsRefusedWithinItsDeclaredLength() throws {
        let unsized = try Self.zstdFrame(zeros: Self.bombLength, pledged: false)
        let sized = try Self.zstdFrame(zeros: Self.bombLength, pledged: true)
        #expect(unsized.count < 1 << 20 && sized.count < 1 << 20)
        let before = Self.maxResidentKiB()
        #expect { try ChunkInflater.inflate(unsized, algorithm: .zstd, rawLength: Self.declaredLength) } throws: {
            Self.isCorrupt($0, containing: "inflates past 1048576 bytes")
        }
        #expect { try ChunkInflater.inflate(sized, algorithm: .zstd, rawLength: Self.declaredLength) } throws: {
            Self.isCorrupt($0, containing: "frame declares 268435456 bytes")
        }
        #expect(Self.maxResidentKiB() - before < 64 << 10)
    }

    /// A frame without its content size, of exactly the declared length, is accepted (other zstd encoders may
    /// leave the size out).
    @Test func zstdFrameWithoutContentSizeInflates() throws {
        let frame = try Self.zstdFrame(zeros: 100_000, pledged: false)
        #expect(
            try ChunkInflater.inflate(frame, algorithm: .zstd, rawLength: 100_000)
                == [UInt8](repeating: 0, count: 100_000))
        #expect { try ChunkInflater.inflate(frame, algorithm: .zstd, rawLength: 100_001) } throws: {
            Self.isCorrupt($0, containing: "inflates to 100000 of 100001 bytes")
        }
    }
}
