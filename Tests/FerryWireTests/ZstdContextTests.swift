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

    /// A compression and an inflation each leave their context for the next; more than the limit are not kept.
    @Test func contextsAreKeptForTheNextChunk() throws {
        ZstdContexts.compression.drain()
        ZstdContexts.decompression.drain()
        let raw = Self.text(200_000, seed: 1)
        let compressed = try #require(ChunkCompressor.compress(raw, algorithm: .zstd, level: 3))
        #expect(ZstdContexts.compression.idleCount == 1)
        #expect(try ChunkInflater.inflate(compressed, algorithm: .zstd, rawLength: raw.count) == raw)
        #expect(ZstdContexts.decompression.idleCount == 1)
        // The kept one is taken again, not a new one made.
        let kept = try #require(ZstdContexts.compression.take())
        #expect(ZstdContexts.compression.idleCount == 0)
        let more = (0..<(ZstdContexts.limit + 1)).compactMap { _ in ZstdContexts.compression.take() }
        ZstdContexts.compression.give(kept)
        for context in more { ZstdContexts.compression.give(context) }
        #expect(ZstdContexts.compression.idleCount == ZstdContexts.limit)
    }

    /// A context used for a prefixed frame at level 8, then for plain frames at other levels, gives each the bytes a
    /// new context gives: nothing of the last frame's level, window or prefix carries over.
    @Test func aKeptContextCarriesNothingOver() throws {
        let previous = Self.text(300_000, seed: 2)
        let raw = Self.text(300_000, seed: 3)
        func fresh(_ body: () -> [UInt8]?) -> [UInt8]? {
            ZstdContexts.compression.drain()
            return body()
        }
        let sequence: [(level: Int, prefixed: Bool)] = [(8, true), (1, false), (3, true), (2, false), (1, true)]
        var reused: [[UInt8]?] = []
        ZstdContexts.compression.drain()
        for (level, prefixed) in sequence {
            reused.append(
                prefixed
                    ? ChunkCompressor.compress(raw, level: level, prefix: previous)
                    : ChunkCompressor.compress(raw, algorithm: .zstd, level: level))
        }
        for (index, (level, prefixed)) in sequence.enumerated() {
            let new = fresh {
                prefixed
                    ? ChunkCompressor.compress(raw, level: level, prefix: previous)
                    : ChunkCompressor.compress(raw, algorithm: .zstd, level: level)
            }
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
