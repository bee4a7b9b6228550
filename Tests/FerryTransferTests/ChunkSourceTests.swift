import Foundation
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

    /// The offer's sniff reads 4 KiB of a file, and up to 64 KiB where that may not answer: a JPEG whose size comes
    /// after 20 KiB of EXIF is offered with its size (broken on purpose, reading 4 KiB only: no size).
    @Test func aJPEGWithLongMetadataIsOfferedWithItsSize() throws {
        let directory = try TemporaryDirectory(prefix: "ferry-sniff")
        defer { directory.remove() }
        func be16(_ value: Int) -> [UInt8] { [UInt8(value >> 8 & 0xFF), UInt8(value & 0xFF)] }
        let exif = [0xFF, 0xE1] + be16(20_002) + [UInt8](repeating: 0, count: 20_000)
        let frame = [0xFF, 0xC0] + be16(17) + [8] + be16(600) + be16(800) + [3] + [UInt8](repeating: 0, count: 9)
        let jpeg = [0xFF, 0xD8] + exif + frame + [UInt8](repeating: 0x55, count: 100_000)
        let path = directory.path + "/photo.jpg"
        try Data(jpeg).write(to: URL(fileURLWithPath: path))
        let offered = try PreparedFile.prepare(SourceFile(path: path, name: "photo.jpg")).offered
        #expect(offered.mediaType == "image/jpeg" && offered.pixelWidth == 800 && offered.pixelHeight == 600)
    }
}
