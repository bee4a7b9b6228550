import FerryStateMachines
import FerryTestSupport
import FerryWire
import Foundation
import Testing

@testable import FerryTransfer

/// Files of one chunk read together (`ChunkSource+Together`): one trip to the queue reads and hashes the file asked
/// for and the small files after it; each goes out as it would have alone, and a file that changed fails alone.
@Suite(.timeLimit(.minutes(1))) struct ChunkSourceTogetherTests {
    static let chunk = Limits.minChunkSize

    /// `sizes` random files in `directory`, prepared, and a raw chunk source for one peer over them; and their bytes.
    static func source(
        sizes: [Int], in directory: TemporaryDirectory, compression: CompressionMode = .none
    ) throws -> (ChunkSource, [[UInt8]], [URL]) {
        var prepared: [PreparedFile] = []
        var contents: [[UInt8]] = []
        var urls: [URL] = []
        for (index, size) in sizes.enumerated() {
            let url = try TestFiles(in: directory).random("f\(index).bin", size: size, seed: UInt64(90 + index))
            prepared.append(try PreparedFile.prepare(SourceFile(path: url.path, name: "f\(index).bin")))
            contents.append(try [UInt8](Data(contentsOf: url)))
            urls.append(url)
        }
        let policy = CompressionPolicy(mode: compression, available: [.zlib, .zstd])
        return (ChunkSource(files: prepared, chunkSize: chunk, policy: policy, cacheLimit: 0), contents, urls)
    }

    /// Ten small files: asking for the first reads all ten (one trip); the other nine are served without reading
    /// again, each with its bytes, its chunk digest and its file digest.
    @Test func theSmallFilesAfterTheOneAskedForAreReadInTheSameTrip() async throws {
        try await TemporaryDirectory.with(prefix: "ferry-together") { directory in
            let sizes = [1000, 1, 4096, 700, Self.chunk, 30, 2000, 5, 999, 12_345]
            let (source, contents, _) = try Self.source(sizes: sizes, in: directory)
            for (index, bytes) in contents.enumerated() {
                let prepared = try await source.chunk(file: index, offset: 0, length: bytes.count, cycle: nil)
                #expect(prepared.codec == .none)
                #expect(prepared.data == bytes, "f\(index)")
                #expect(prepared.sha256 == FileDigest.chunkDigest(bytes[...]), "f\(index)")
                #expect(prepared.fileDigest == FileDigest.of(bytes, chunkSize: Self.chunk), "f\(index)")
                #expect(await source.diskReads == sizes.count, "every file read by the first trip")
            }
            #expect(await source.aheadTaken == sizes.count - 1)
            await source.close()
        }
    }

    /// A file of the trip that changed after it was offered fails, alone: the one asked for and the others go.
    @Test func aFileThatChangedFailsAloneAndTheOthersGo() async throws {
        try await TemporaryDirectory.with(prefix: "ferry-together") { directory in
            let (source, contents, urls) = try Self.source(sizes: [500, 600, 700, 800], in: directory)
            try Data(repeating: 7, count: 100).write(to: urls[2])  // cut after it was offered
            let first = try await source.chunk(file: 0, offset: 0, length: contents[0].count, cycle: nil)
            #expect(first.data == contents[0])
            let second = try await source.chunk(file: 1, offset: 0, length: contents[1].count, cycle: nil)
            #expect(second.data == contents[1])
            await #expect(throws: ChunkSource.Failure.self) {
                try await source.chunk(file: 2, offset: 0, length: contents[2].count, cycle: nil)
            }
            #expect(await source.failureText(of: 2).contains("changed"))
            let fourth = try await source.chunk(file: 3, offset: 0, length: contents[3].count, cycle: nil)
            #expect(fourth.data == contents[3])
            #expect(await source.diskReads == 4)
            await source.close()
        }
    }

    /// A file larger than one chunk, or a source that compresses, is not read together: each file goes its own way.
    @Test func onlyRawFilesOfOneChunkAreReadTogether() async throws {
        try await TemporaryDirectory.with(prefix: "ferry-together") { directory in
            let (source, contents, _) = try Self.source(sizes: [800, Self.chunk + 1, 900], in: directory)
            _ = try await source.chunk(file: 0, offset: 0, length: 800, cycle: nil)
            #expect(await source.diskReads == 1, "the next file has two chunks: nothing to read together")
            await source.close()
            let (zstd, _, _) = try Self.source(sizes: [800, 900, 1000], in: directory, compression: .zstd)
            _ = try await zstd.chunk(file: 0, offset: 0, length: 800, cycle: nil)
            #expect(await zstd.diskReads == 1, "compressed chunks go one by one")
            await zstd.close()
            _ = contents
        }
    }
}
