import FerrySession
import FerryTestSupport
import FerryWire
import FerrySystem
import Foundation
import Synchronization
import Testing

@testable import FerryTransfer

/// Write-behind: a large staged file's writeback starts as its chunks land and the pages written `lag` bytes
/// earlier are dropped from the page cache; small files are left to the sync before publishing. Where the file
/// system takes direct writes, a large file goes past the page cache instead (these tests of write-behind turn that
/// off).
@Suite(.serialized, .timeLimit(.minutes(2))) struct WriteBehindTests {
    @Test func smallFilesGetNoWriteBehind() {
        let size = WriteBehind.minimumFileSize - 1
        #expect(WriteBehind.after(writing: 1 << 20, at: 0, fileSize: size) == WriteBehind())
        #expect(WriteBehind.after(writing: 1 << 20, at: size - (1 << 20), fileSize: size) == WriteBehind())
    }

    @Test func largeFilesStartWritebackAtOnceAndEvictLagBehind() {
        let size = WriteBehind.minimumFileSize * 4
        let mib: UInt64 = 1 << 20
        #expect(WriteBehind.after(writing: 1 << 20, at: 0, fileSize: size) == WriteBehind(start: 0..<mib))
        let lag = WriteBehind.lag
        #expect(
            WriteBehind.after(writing: 1 << 20, at: lag - mib, fileSize: size)
                == WriteBehind(start: (lag - mib)..<lag))
        #expect(
            WriteBehind.after(writing: 1 << 20, at: lag + 3 * mib, fileSize: size)
                == WriteBehind(start: (lag + 3 * mib)..<(lag + 4 * mib), evict: (3 * mib)..<(4 * mib)))
        #expect(WriteBehind.after(writing: 0, at: lag, fileSize: size) == WriteBehind())
    }

    /// A 24 MiB file in 1 MiB chunks: once published, at most the last `lag` bytes and the chunk in hand can still
    /// be in the page cache (without write-behind all 24 MiB are). Skipped on tmpfs, whose pages are the file.
    @Test func aLargeReceivedFileDoesNotStayWholeInThePageCache() async throws {
        try await TemporaryDirectory.with(prefix: "engine-in") { inbox in
            if PageCache.isTmpfs(path: inbox.path) {
                try Test.cancel("the temporary directory is on tmpfs, where pages cannot be dropped")
            }
            let chunk = 1 << 20
            var generator = SplitMix64(seed: 24)
            let pattern = (0..<(chunk / 8)).flatMap { _ in withUnsafeBytes(of: generator.next()) { Array($0) } }
            var bytes: [UInt8] = []
            for index in 0..<24 { bytes += [UInt8(index)] + pattern.dropFirst() }
            try await TransferHostilePeerTests.withMallory(inbox: inbox.path, policy: .all) { mallory, bob, engine in
                await engine.useDirectWrites(false)
                let sender = HostileSender(session: mallory, receiver: bob)
                let result = try #require(await sender.sendWhole("large.bin", bytes, chunkSize: chunk))
                #expect(result.status == .published && result.detail == "large.bin")
            }
            let path = inbox.path + "/large.bin"
            let cached = try PageCache.residentBytes(path: path)
            #expect(cached.size == bytes.count)
            #expect(
                cached.resident <= Int(WriteBehind.lag) + 2 * chunk,
                "\(cached.resident) of \(cached.size) bytes still cached")
            #expect(try [UInt8](Data(contentsOf: URL(fileURLWithPath: path))) == bytes)
        }
    }

    /// Where the file system takes direct writes, a large received file is written past the page cache: once
    /// published, nothing of it is cached but the page of its partial last block (write-behind alone leaves up to
    /// `lag` bytes and the chunk in hand). The file reads back whole.
    @Test func aLargeReceivedFileIsWrittenPastThePageCache() async throws {
        try await TemporaryDirectory.with(prefix: "engine-in") { inbox in
            let probe = try DirectoryHandle.open(path: inbox.path, createIfMissing: false)
            let file = try probe.createFile("probe", exclusive: true)
            // Direct writes offered (statx) and taken (one aligned block written direct, not refused).
            let block = [UInt8](repeating: 7, count: 4096)
            let direct = file.enableDirectWrites() && (try? file.write(block, at: 0)) != nil && file.writesDirectly
            file.close()
            try probe.removeFile("probe")
            probe.close()
            if !direct { try Test.cancel("the temporary directory's file system takes no direct writes") }
            let chunk = 1 << 20
            var generator = SplitMix64(seed: 26)
            let words = 20 * chunk / 8 + 125  // 20 MiB and 1000 bytes: the last block is partial
            let bytes = (0..<words).flatMap { _ in withUnsafeBytes(of: generator.next()) { Array($0) } }
            try await TransferHostilePeerTests.withMallory(inbox: inbox.path, policy: .all) { mallory, bob, _ in
                let sender = HostileSender(session: mallory, receiver: bob)
                let result = try #require(await sender.sendWhole("large.bin", bytes, chunkSize: chunk))
                #expect(result.status == .published && result.detail == "large.bin")
            }
            let path = inbox.path + "/large.bin"
            let whole = bytes.count / 4096 * 4096
            #expect(try PageCache.residentBytes(path: path, in: 0..<whole).resident == 0)
            #expect(try [UInt8](Data(contentsOf: URL(fileURLWithPath: path))) == bytes)
        }
    }

    /// The evictions run on the writeback queue: a failed one is kept for the file and reported once every eviction
    /// queued before has run, never lost because nothing waited for it.
    @Test func aFailedEvictionIsReportedWhenDrained() async throws {
        try await TemporaryDirectory.with(prefix: "writeback") { directory in
            let path = directory.path + "/staged"
            #expect(FileManager.default.createFile(atPath: path, contents: Data(count: 3 << 20)))
            let file = try RegularFile.open(path: path)
            defer { file.close() }
            let evicted = Mutex<[Range<UInt64>]>([])
            let writeback = Writeback(maximumPending: 1) { _, range throws(SystemError) in
                evicted.withLock { $0.append(range) }
                if range.lowerBound == 1 << 20 { throw SystemError(call: "sync_file_range()", errno: .ioError) }
            }
            let failure = WritebackFailure()
            #expect(await writeback.drained(failure) == nil)
            for offset: UInt64 in [0, 1 << 20, 2 << 20] {
                writeback.evict(offset..<(offset + (1 << 20)), of: file, failure: failure)
            }
            let reported = await writeback.drained(failure)
            #expect(reported?.errno == .ioError)
            let mib: UInt64 = 1 << 20
            let expected: [Range<UInt64>] = [0..<mib, mib..<(2 * mib), (2 * mib)..<(3 * mib)]
            #expect(evicted.withLock { $0 } == expected)
            #expect(await writeback.drained(WritebackFailure()) == nil)
        }
    }

    /// A large file whose write-behind fails to write back part of it (EIO from the wait) ends as a write failure:
    /// nothing is published, although its chunks were acknowledged before the wait.
    @Test func aLargeFileWhoseWritebackFailedIsNotPublished() async throws {
        try await TemporaryDirectory.with(prefix: "engine-in") { inbox in
            let chunk = 1 << 20
            var generator = SplitMix64(seed: 25)
            let bytes = (0..<(24 * chunk / 8)).flatMap { _ in withUnsafeBytes(of: generator.next()) { Array($0) } }
            try await TransferHostilePeerTests.withMallory(inbox: inbox.path, policy: .all) { mallory, bob, engine in
                await engine.useDirectWrites(false)
                await engine.useWriteback(
                    Writeback { file, range throws(SystemError) in
                        try file.evictWritten(at: range.lowerBound, count: Int(range.count))
                        if range.lowerBound == 3 << 20 { throw SystemError(call: "sync_file_range()", errno: .ioError) }
                    })
                let sender = HostileSender(session: mallory, receiver: bob)
                let result = try #require(await sender.sendWhole("large.bin", bytes, chunkSize: chunk))
                #expect(result.status == .writeFailed, "\(result)")
            }
            #expect(!FileManager.default.fileExists(atPath: inbox.path + "/large.bin"))
        }
    }
}
