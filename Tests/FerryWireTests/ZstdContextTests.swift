import Testing

@testable import FerryWire

/// zstd contexts are kept from chunk to chunk (`ZstdContexts`), and a kept one gives the same frames as a new one.
@Suite(.serialized) struct ZstdContextTests {
    static func text(_ count: Int, seed: UInt64) -> [UInt8] {
        var state = seed
        let words = ["struct", "return", "int", "const", "char", "void", "#define", "{", "}", ";", "\n", "static"]
        var bytes: [UInt8] = []
        while bytes.count < count {
            state = state &* 6_364_136_223_846_793_005 &+ 1_442_695_040_888_963_407
            bytes += Array(words[Int(state >> 60) % words.count].utf8) + [32]
        }
        return Array(bytes.prefix(count))
    }

    /// Compresses `raw` with contexts from `pool` (a test's own, so that other tests compressing at the same time
    /// in this process neither take its contexts nor leave theirs in it).
    static func compress(_ raw: [UInt8], level: Int, prefix: [UInt8]? = nil, pool: ZstdContexts.Pool) -> [UInt8]? {
        var output = [UInt8](repeating: 0, count: raw.count)
        let length = raw.withUnsafeBytes { raw in
            output.withUnsafeMutableBytes { output in
                guard let prefix else { return ZstdCodec.compress(raw, into: output, level: level, pool: pool) }
                return prefix.withUnsafeBytes {
                    ZstdCodec.compress(raw, into: output, level: level, prefix: $0, pool: pool)
                }
            }
        }
        return length.map { Array(output.prefix($0)) }
    }

    /// Inflates `frame` to `rawLength` bytes with contexts from `pool`.
    static func inflate(_ frame: [UInt8], rawLength: Int, prefix: [UInt8]? = nil, pool: ZstdContexts.Pool) throws
        -> [UInt8]
    {
        var output = [UInt8](repeating: 0, count: rawLength)
        try frame.withUnsafeBytes { frame in
            try output.withUnsafeMutableBytes { output in
                guard let prefix else { return try ZstdCodec.decompress(frame, into: output, pool: pool) }
                try prefix.withUnsafeBytes { try ZstdCodec.decompress(frame, into: output, prefix: $0, pool: pool) }
            }
        }
        return output
    }

    /// A compression and an inflation each leave their context for the next; more than the limit are not kept.
    @Test func contextsAreKeptForTheNextChunk() throws {
        let compression = ZstdContexts.Pool.compression()
        let decompression = ZstdContexts.Pool.decompression()
        let raw = Self.text(200_000, seed: 1)
        let compressed = try #require(Self.compress(raw, level: 3, pool: compression))
        #expect(compression.idleCount == 1)
        #expect(try Self.inflate(compressed, rawLength: raw.count, pool: decompression) == raw)
        #expect(decompression.idleCount == 1)
        // The kept one is taken again, not a new one made.
        let kept = try #require(compression.take())
        #expect(compression.idleCount == 0)
        let more = (0..<(ZstdContexts.limit + 1)).compactMap { _ in compression.take() }
        compression.give(kept)
        for context in more { compression.give(context) }
        #expect(compression.idleCount == ZstdContexts.limit)
    }

    /// A context used for a prefixed frame at level 8, then for plain frames at other levels, gives each the bytes a
    /// new context gives: nothing of the last frame's level, window or prefix carries over.
    @Test func aKeptContextCarriesNothingOver() throws {
        let previous = Self.text(300_000, seed: 2)
        let raw = Self.text(300_000, seed: 3)
        let sequence: [(level: Int, prefixed: Bool)] = [(8, true), (1, false), (3, true), (2, false), (1, true)]
        // One pool for the whole sequence: each frame takes the context the frame before it left.
        let reusedPool = ZstdContexts.Pool.compression()
        var reused: [[UInt8]?] = []
        for (level, prefixed) in sequence {
            reused.append(Self.compress(raw, level: level, prefix: prefixed ? previous : nil, pool: reusedPool))
            #expect(reusedPool.idleCount == 1)
        }
        for (index, (level, prefixed)) in sequence.enumerated() {
            // A pool of its own: a context never used before.
            let new = Self.compress(
                raw, level: level, prefix: prefixed ? previous : nil, pool: ZstdContexts.Pool.compression())
            #expect(reused[index] == new, "frame \(index): level \(level), prefixed \(prefixed)")
            let frame = try #require(new)
            let inflated =
                prefixed
                ? try ChunkInflater.inflate(frame[...], rawLength: raw.count, prefix: previous[...])
                : try ChunkInflater.inflate(frame, algorithm: .zstd, rawLength: raw.count)
            #expect(inflated == raw)
        }
    }
}
