import FerryStateMachines
import FerryTestSupport
import FerryWire
import Foundation
import Testing

@testable import FerryTransfer

/// Compress-ahead (`ChunkSource+Ahead`): the next chunk of a file is prepared while the one before is on the wire,
/// and goes out exactly as it would have if prepared on request.
@Suite(.timeLimit(.minutes(1))) struct ChunkSourceAheadTests {
    static let chunk = Limits.minChunkSize

    /// A chunk source compressing a text file of `size` bytes in `directory` with zstd, for one peer; and the bytes.
    static func zstdSource(
        textOf size: Int, seed: UInt64, in directory: TemporaryDirectory
    ) throws -> (ChunkSource, [UInt8]) {
        let url = try TestFiles(in: directory).text(size: size, seed: seed)
        let file = try PreparedFile.prepare(SourceFile(path: url.path, name: "text.txt"))
        let source = ChunkSource(
            files: [file], chunkSize: chunk, policy: CompressionPolicy(mode: .zstd, available: [.zstd]), cacheLimit: 0)
        return (source, try [UInt8](Data(contentsOf: url)))
    }

    /// A text file of three chunks and a source compressing with zstd: the source that asked for the chunks one after
    /// the other was served the second and third from the work queued ahead, each read once, each with the file's
    /// chunk before as prefix, each inflating to the file's bytes with the digest of those bytes, and the last
    /// carrying the file digest.
    @Test func theNextChunkIsPreparedAheadAndGoesAsOnRequest() async throws {
        try await TemporaryDirectory.with(prefix: "ferry-chunk-ahead") { directory in
            let (source, bytes) = try Self.zstdSource(textOf: 3 * Self.chunk - 1000, seed: 3, in: directory)
            let digest = FileDigest()
            var chunks: [ChunkSource.Prepared] = []
            for index in 0..<3 {
                let range = index * Self.chunk..<min((index + 1) * Self.chunk, bytes.count)
                let prepared = try await source.chunk(
                    file: 0, offset: UInt64(range.lowerBound), length: range.count, cycle: nil,
                    prefixAllowed: index > 0)
                let raw =
                    if index > 0 {
                        try ChunkInflater.inflate(
                            prepared.data[...], rawLength: range.count,
                            prefix: bytes[(range.lowerBound - Self.chunk)..<range.lowerBound])
                    } else {
                        try ChunkInflater.inflate(prepared.data, algorithm: .zstd, rawLength: range.count)
                    }
                #expect(raw[...] == bytes[range])
                #expect(prepared.sha256 == FileDigest.chunkDigest(bytes[range]))
                digest.add(chunkDigest: prepared.sha256)
                chunks.append(prepared)
            }
            #expect(chunks.map(\.codec) == [.zstd, .zstdPrefixed, .zstdPrefixed])
            #expect(chunks.map { $0.fileDigest == nil } == [true, true, false])
            #expect(chunks[2].fileDigest == digest.finalize())
            #expect(await source.aheadTaken == 2)
            #expect(await source.diskReads == 3)
            #expect(try await source.digest(of: 0) == chunks[2].fileDigest)
            await source.close()
        }
    }

    /// The chunk after the first is prepared ahead with the first as prefix; asked for by a peer that was not sent
    /// the first just before (prefix not allowed), it is compressed again without one: plain zstd that inflates
    /// alone.
    @Test func aChunkPreparedAheadIsCompressedAgainWhenItsPrefixIsNotAllowed() async throws {
        try await TemporaryDirectory.with(prefix: "ferry-chunk-ahead") { directory in
            let (source, bytes) = try Self.zstdSource(textOf: 2 * Self.chunk, seed: 4, in: directory)
            _ = try await source.chunk(file: 0, offset: 0, length: Self.chunk, cycle: nil)
            let second = try await source.chunk(
                file: 0, offset: UInt64(Self.chunk), length: Self.chunk, cycle: nil, prefixAllowed: false)
            #expect(second.codec == .zstd)
            let raw = try ChunkInflater.inflate(second.data, algorithm: .zstd, rawLength: Self.chunk)
            #expect(raw[...] == bytes[Self.chunk...])
            #expect(await source.aheadTaken == 1)
            await source.close()
        }
    }

    /// A chunk compressed ahead at one level and compressed again because the level moved when it was asked for
    /// gives the controller no pace: its cycle holds both compressions. Level 3, CPU-bound (4 ms cycles, nothing
    /// waited): the paces of chunks 0-3 move it to 2 when chunk 4 is asked for (compressed ahead at 3, again at 2);
    /// the next epoch is chunks 5-8, so the move to 1 comes when chunk 9 is asked for, not chunk 8.
    @Test func aChunkCompressedAgainAfterAMoveGivesNoPace() async throws {
        try await TemporaryDirectory.with(prefix: "ferry-chunk-ahead") { directory in
            let url = try TestFiles(in: directory).text(size: 12 * Self.chunk, seed: 5)
            let file = try PreparedFile.prepare(SourceFile(path: url.path, name: "text.txt"))
            let policy = CompressionPolicy(
                mode: .auto, available: [.zstd], ladder: Array(CompressionLevelController.zstdLadder.prefix(4)),
                warmUpChunks: 0, startLevel: 3)
            let source = ChunkSource(files: [file], chunkSize: Self.chunk, policy: policy, cacheLimit: 0)
            let cycle = PumpCycle(seconds: 0.004, waitedSeconds: 0, inFlightBytes: 0)
            var levels: [Int] = []
            for index in 0..<10 {
                _ = try await source.chunk(
                    file: 0, offset: UInt64(index * Self.chunk), length: Self.chunk, cycle: index == 0 ? nil : cycle,
                    prefixAllowed: index > 0)
                levels.append(await source.policy.controller.level)
            }
            #expect(levels == [3, 3, 3, 3, 2, 2, 2, 2, 2, 1])
            await source.close()
        }
    }

    /// While the pump waits for its window (`extendAhead`), a source sending one peer compressed chunks prepares every
    /// chunk its budget allows, not one: each deeper chunk keeps only its compressed bytes, goes as on request (the
    /// file's chunk before as prefix, the digest of its bytes, the file digest with the last), and is read once.
    /// Without the wait the queue holds one chunk.
    @Test func whileThePumpWaitsTheSourcePreparesSeveralChunksAhead() async throws {
        try await TemporaryDirectory.with(prefix: "ferry-chunk-ahead") { directory in
            let count = 10
            let (source, bytes) = try Self.zstdSource(textOf: count * Self.chunk - 777, seed: 6, in: directory)
            let range = { (index: Int) in index * Self.chunk..<min((index + 1) * Self.chunk, bytes.count) }
            let digest = FileDigest()
            var chunks: [ChunkSource.Prepared] = []
            func ask(_ index: Int, prefixAllowed: Bool = true) async throws {
                let prepared = try await source.chunk(
                    file: 0, offset: UInt64(range(index).lowerBound), length: range(index).count, cycle: nil,
                    prefixAllowed: prefixAllowed && index > 0)
                let raw =
                    if prepared.codec == .zstdPrefixed {
                        try ChunkInflater.inflate(
                            prepared.data[...], rawLength: range(index).count, prefix: bytes[range(index - 1)])
                    } else {
                        try ChunkInflater.inflate(prepared.data, algorithm: .zstd, rawLength: range(index).count)
                    }
                #expect(raw[...] == bytes[range(index)], "chunk \(index)")
                #expect(prepared.sha256 == FileDigest.chunkDigest(bytes[range(index)]))
                digest.add(chunkDigest: prepared.sha256)
                chunks.append(prepared)
            }
            try await ask(0)
            await source.settleAhead()
            #expect(await source.aheads.count == 1)
            try await ask(1)
            await source.extendAhead()
            await source.settleAhead()
            let queued = await source.aheads
            #expect(queued.map(\.key.offset) == (2..<count).map { UInt64($0 * Self.chunk) })
            #expect(queued.dropFirst().allSatisfy { $0.made?.raw.isEmpty == true })
            for index in 2..<count { try await ask(index) }
            #expect(chunks.map(\.codec) == [.zstd] + Array(repeating: .zstdPrefixed, count: count - 1))
            #expect(chunks.map { $0.fileDigest != nil } == Array(repeating: false, count: count - 1) + [true])
            #expect(chunks.last?.fileDigest == digest.finalize())
            #expect(await source.aheadTaken == count - 1)
            #expect(await source.diskReads == count)
            await source.close()
        }
    }

    /// A chunk queued behind another kept no raw bytes: asked for by a peer that may not use its prefix, it is read
    /// again and goes as plain zstd, which inflates alone.
    @Test func aDeeperChunkWhosePrefixIsNotAllowedIsReadAgain() async throws {
        try await TemporaryDirectory.with(prefix: "ferry-chunk-ahead") { directory in
            let (source, bytes) = try Self.zstdSource(textOf: 4 * Self.chunk, seed: 7, in: directory)
            _ = try await source.chunk(file: 0, offset: 0, length: Self.chunk, cycle: nil)
            await source.extendAhead()
            await source.settleAhead()
            #expect(await source.aheads.count == 3)
            _ = try await source.chunk(
                file: 0, offset: UInt64(Self.chunk), length: Self.chunk, cycle: nil, prefixAllowed: true)
            let third = try await source.chunk(
                file: 0, offset: UInt64(2 * Self.chunk), length: Self.chunk, cycle: nil, prefixAllowed: false)
            #expect(third.codec == .zstd)
            let raw = try ChunkInflater.inflate(third.data, algorithm: .zstd, rawLength: Self.chunk)
            #expect(raw[...] == bytes[(2 * Self.chunk)..<(3 * Self.chunk)])
            #expect(third.sha256 == FileDigest.chunkDigest(bytes[(2 * Self.chunk)..<(3 * Self.chunk)]))
            #expect(await source.diskReads == 5)
            #expect(await source.aheadTaken == 2)
            await source.close()
        }
    }
}
