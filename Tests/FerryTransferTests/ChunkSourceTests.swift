import FerryStateMachines
import FerryTestSupport
import FerryWire
import Testing

@testable import FerryTransfer

/// `ChunkSource` in a broadcast: each chunk is read (and checksummed) once for all peers.
@Suite(.timeLimit(.minutes(1))) struct ChunkSourceTests {
    /// Four peers ask for the same chunks at the same time, as the pumps of a broadcast do: each chunk is read from
    /// disk once, the requests that came while it was being read wait for that read, and all get the same bytes.
    @Test func peersAskingForAChunkAtOnceShareOneRead() async throws {
        let directory = try TemporaryDirectory(prefix: "ferry-chunk-source")
        defer { directory.remove() }
        let chunk = Limits.minChunkSize
        let url = try TestFiles(in: directory).random(size: 3 * chunk, seed: 5)
        let file = try PreparedFile.prepare(SourceFile(path: url.path, name: "random.bin"))
        let source = ChunkSource(
            files: [file], chunkSize: chunk, policy: CompressionPolicy(mode: .none, available: []),
            cacheLimit: 24 << 20)
        for index in 0..<3 {
            let offset = UInt64(index * chunk)
            let prepared = try await withThrowingTaskGroup(of: ChunkSource.Prepared.self) { group in
                for _ in 0..<4 {
                    group.addTask {
                        try await source.chunk(file: 0, offset: offset, length: chunk, cycle: nil)
                    }
                }
                return try await group.reduce(into: []) { $0.append($1) }
            }
            #expect(prepared.count == 4)
            #expect(Set(prepared.map(\.data)).count == 1)
            #expect(prepared.allSatisfy { $0.data.count == chunk && $0.sha256 == prepared[0].sha256 })
        }
        #expect(await source.diskReads == 3)
        await source.close()
    }
}
