import FerryStateMachines
import FerrySystem
import FerryTestSupport
import FerryWire
import Foundation
import Testing

@testable import FerryTransfer

/// Chunk digests kept between sends (`DigestCache`, `ChunkSource+Kept`): an unchanged file is read, not hashed; a
/// changed one, a young one, a small one or a damaged entry is hashed as before; a stale entry can cost a failed
/// file, never a wrong one.
@Suite(.timeLimit(.minutes(2))) struct DigestCacheTests {
    static let chunk = Limits.minChunkSize

    /// The status of `path` as the sender takes it.
    static func status(_ path: String) throws -> FerrySystem.FileStatus {
        let file = try RegularFile.open(path: path)
        defer { file.close() }
        return file.statusAtOpen
    }

    /// `count` chunk digests that are not those of any real chunk.
    static func fakeDigests(_ count: Int, _ byte: UInt8 = 0xAB) -> [UInt8] {
        (0..<count).flatMap { index in [UInt8](repeating: byte &+ UInt8(index), count: FileDigest.length) }
    }

    /// The real chunk digests of `bytes`, concatenated.
    static func realDigests(_ bytes: [UInt8]) -> [UInt8] {
        stride(from: 0, to: bytes.count, by: chunk).flatMap { start in
            FileDigest.chunkDigest(bytes[start..<min(start + chunk, bytes.count)])
        }
    }

    /// A status like `status`, its times moved `seconds` into the past (for the settled rule, without waiting).
    static func aged(_ status: FerrySystem.FileStatus, by seconds: Int64) -> FerrySystem.FileStatus {
        var old = status
        old.changeTime.seconds -= seconds
        old.modificationTime.seconds -= seconds
        return old
    }

    @Test func anEntryIsFoundOnlyForTheSameFileAsItWas() async throws {
        try await TemporaryDirectory.with(prefix: "digest-cache") { folder in
            let path = try TestFiles(in: folder).random("video.bin", size: 4 * Self.chunk + 10, seed: 3).path
            let cache = DigestCache(directory: folder.path + "/cache")
            let status = Self.aged(try Self.status(path), by: 60)
            let digests = Self.fakeDigests(5)
            #expect(cache.store(digests, for: status, statedAt: Date().timeIntervalSince1970, chunkSize: Self.chunk))
            #expect(cache.lookup(status, chunkSize: Self.chunk) == digests)
            #expect(cache.entryCount() == 1)
            var changed = status
            changed.changeTime.nanoseconds ^= 1
            #expect(cache.lookup(changed, chunkSize: Self.chunk) == nil, "another change time")
            changed = status
            changed.modificationTime.nanoseconds ^= 1
            #expect(cache.lookup(changed, chunkSize: Self.chunk) == nil, "another modification time")
            changed = status
            changed.inode += 1
            #expect(cache.lookup(changed, chunkSize: Self.chunk) == nil, "another file")
            changed = status
            changed.size += 1
            #expect(cache.lookup(changed, chunkSize: Self.chunk) == nil, "another size")
            #expect(cache.lookup(status, chunkSize: 2 * Self.chunk) == nil, "another chunk size")
            cache.remove(status, chunkSize: Self.chunk)
            #expect(cache.lookup(status, chunkSize: Self.chunk) == nil)
            #expect(cache.entryCount() == 0)
        }
    }

    /// A file changed less than 2 s before its status was taken could be written again within the same clock tick
    /// without a new change time: it is not kept. Nor is a wrong number of digests. A file of fewer than 4 chunks is
    /// kept in the one small-digests file, not in an entry of its own.
    @Test func youngSmallOrMiscountedFilesAreNotKept() async throws {
        try await TemporaryDirectory.with(prefix: "digest-cache") { folder in
            let path = try TestFiles(in: folder).random("video.bin", size: 4 * Self.chunk, seed: 3).path
            let cache = DigestCache(directory: folder.path + "/cache")
            let now = Date().timeIntervalSince1970
            let fresh = try Self.status(path)
            #expect(!cache.store(Self.fakeDigests(4), for: fresh, statedAt: now, chunkSize: Self.chunk), "just written")
            let young = Self.aged(fresh, by: 1)
            #expect(!cache.store(Self.fakeDigests(4), for: young, statedAt: now, chunkSize: Self.chunk))
            var small = Self.aged(fresh, by: 60)
            small.size = UInt64(3 * Self.chunk)
            #expect(cache.store(Self.fakeDigests(3), for: small, statedAt: now, chunkSize: Self.chunk), "3 chunks")
            #expect(cache.lookup(small, chunkSize: Self.chunk) == Self.fakeDigests(3))
            let old = Self.aged(fresh, by: 60)
            #expect(!cache.store(Self.fakeDigests(3), for: old, statedAt: now, chunkSize: Self.chunk), "3 digests")
            #expect(cache.entryCount() == 0)
            let settled = Self.aged(fresh, by: 3)
            #expect(cache.store(Self.fakeDigests(4), for: settled, statedAt: now, chunkSize: Self.chunk))
        }
    }

    /// Review: the small files' table was read with FileHandle(forReadingAtPath:), under the table's lock: a FIFO
    /// (or a link to one) planted in the cache directory held the open, and every send with it. Read as
    /// `PrivateFile.read` reads: no link followed, no blocking open, a regular file of this user only.
    @Test func aFIFOOrALinkInPlaceOfTheSmallTableIsNotRead() async throws {
        try await TemporaryDirectory.with(prefix: "digest-cache") { folder in
            let path = try TestFiles(in: folder).random("small.bin", size: Self.chunk, seed: 4).path
            try FileManager.default.createDirectory(atPath: folder.path + "/cache", withIntermediateDirectories: true)
            let table = folder.path + "/cache/small-digests"
            #expect(mkfifo(table, 0o600) == 0)
            let status = Self.aged(try Self.status(path), by: 60)
            let done = DispatchSemaphore(value: 0)
            let lookup = Thread {
                _ = DigestCache(directory: folder.path + "/cache").lookup(status, chunkSize: Self.chunk)
                done.signal()
            }
            lookup.start()
            let returned = done.wait(timeout: .now() + 20) == .success
            if !returned {
                // Lets the blocked open return (a writer appeared), so that the test ends.
                let writer = open(table, O_WRONLY | O_NONBLOCK)
                if writer >= 0 { close(writer) }
                done.wait()
            }
            #expect(returned, "the lookup blocked on a FIFO")
            // A link to a table elsewhere is not followed either.
            #expect(unlink(table) == 0)
            let elsewhere = DigestCache(directory: folder.path + "/other")
            let now = Date().timeIntervalSince1970
            #expect(elsewhere.store(Self.fakeDigests(1), for: status, statedAt: now, chunkSize: Self.chunk))
            #expect(elsewhere.lookup(status, chunkSize: Self.chunk) == Self.fakeDigests(1))
            #expect(symlink(folder.path + "/other/small-digests", table) == 0)
            #expect(DigestCache(directory: folder.path + "/cache").lookup(status, chunkSize: Self.chunk) == nil)
        }
    }

    @Test func aDamagedOrTruncatedEntryIsIgnored() async throws {
        try await TemporaryDirectory.with(prefix: "digest-cache") { folder in
            let path = try TestFiles(in: folder).random("video.bin", size: 4 * Self.chunk, seed: 3).path
            let cache = DigestCache(directory: folder.path + "/cache")
            let status = Self.aged(try Self.status(path), by: 60)
            let now = Date().timeIntervalSince1970
            #expect(cache.store(Self.fakeDigests(4), for: status, statedAt: now, chunkSize: Self.chunk))
            let name = try #require(try FileManager.default.contentsOfDirectory(atPath: cache.directory).first)
            let entry = URL(fileURLWithPath: cache.directory + "/" + name)
            let original = try Data(contentsOf: entry)
            var damaged = original
            damaged[100] ^= 0x01  // inside the digests
            try damaged.write(to: entry)
            #expect(cache.lookup(status, chunkSize: Self.chunk) == nil, "a flipped bit")
            try original.dropLast(1).write(to: entry)
            #expect(cache.lookup(status, chunkSize: Self.chunk) == nil, "a torn write")
            try (original + Data(count: 1 << 20)).write(to: entry)
            #expect(cache.lookup(status, chunkSize: Self.chunk) == nil, "something longer: not read whole")
            try original.write(to: entry)
            #expect(cache.lookup(status, chunkSize: Self.chunk) == Self.fakeDigests(4))
        }
    }

    /// Past `maxEntries`, the least recently used go (a lookup counts as a use), down to three quarters.
    @Test func theLeastRecentlyUsedEntriesGoFirst() async throws {
        try await TemporaryDirectory.with(prefix: "digest-cache") { folder in
            let path = try TestFiles(in: folder).random("video.bin", size: 4 * Self.chunk, seed: 3).path
            let cache = DigestCache(directory: folder.path + "/cache", maxEntries: 4)
            let base = Self.aged(try Self.status(path), by: 600)
            let now = Date().timeIntervalSince1970
            let statuses = (0..<5).map { index in
                var status = base
                status.inode += UInt64(index)
                return status
            }
            for status in statuses.prefix(4) {
                #expect(cache.store(Self.fakeDigests(4), for: status, statedAt: now, chunkSize: Self.chunk))
            }
            // Entries 0-3 last used 40, 30, 20 and 10 s ago; then entry 0 is looked up (used now).
            for (index, status) in statuses.prefix(4).enumerated() {
                try FileManager.default.setAttributes(
                    [.modificationDate: Date(timeIntervalSince1970: now - Double(40 - 10 * index))],
                    ofItemAtPath: cache.entryPath(status, chunkSize: Self.chunk))
            }
            #expect(cache.lookup(statuses[0], chunkSize: Self.chunk) != nil)
            #expect(cache.store(Self.fakeDigests(4), for: statuses[4], statedAt: now, chunkSize: Self.chunk))
            #expect(cache.entryCount() == 3)
            let kept = statuses.map { cache.lookup($0, chunkSize: Self.chunk) != nil }
            #expect(kept == [true, false, false, true, true])
        }
    }

    /// The digests of a send's files go in one batch: each entry checked as `store` checks it, the cache trimmed once.
    @Test func aBatchStoresEachSettledFileAndTrimsOnce() async throws {
        try await TemporaryDirectory.with(prefix: "digest-cache") { folder in
            let path = try TestFiles(in: folder).random("video.bin", size: 4 * Self.chunk, seed: 3).path
            let cache = DigestCache(directory: folder.path + "/cache", maxEntries: 4)
            let fresh = try Self.status(path)
            let now = Date().timeIntervalSince1970
            var entries = (0..<6).map { index in
                var status = Self.aged(fresh, by: 600)
                status.inode += UInt64(index)
                return (chunkDigests: Self.fakeDigests(4), status: status, statedAt: now)
            }
            entries.append((chunkDigests: Self.fakeDigests(4), status: fresh, statedAt: now))  // young: not kept
            #expect(cache.store(entries, chunkSize: Self.chunk) == 6)
            #expect(cache.entryCount() == 3, "6 stored, then trimmed to three quarters of 4")
        }
    }

    /// Small files' digests live in one file, bounded: the oldest stored go first, the file read back by another
    /// process gives the same entries, and a damaged file counts as empty.
    @Test func theSmallDigestTableKeepsTheNewestWithinItsBound() async throws {
        try await TemporaryDirectory.with(prefix: "digest-cache") { folder in
            let table = SmallDigestTable(directory: folder.path + "/cache", maxEntries: 4)
            let keys = (0..<6).map { [UInt8(truncatingIfNeeded: $0)] + Array(repeating: 1, count: 51) }
            #expect(table.store(keys.prefix(3).map { ($0, Self.fakeDigests(1)) }) == 3)
            #expect(table.store(keys.suffix(3).map { ($0, Self.fakeDigests(2)) }) == 3)
            #expect(table.lookup(keys[0]) == nil && table.lookup(keys[1]) == nil, "the oldest two went")
            #expect(table.lookup(keys[2]) == Self.fakeDigests(1) && table.lookup(keys[5]) == Self.fakeDigests(2))
            let reread = SmallDigestTable(directory: folder.path + "/cache", maxEntries: 4)
            #expect(keys.map { reread.lookup($0) != nil } == [false, false, true, true, true, true])
            let file = folder.path + "/cache/small-digests"
            var bytes = [UInt8](try Data(contentsOf: URL(fileURLWithPath: file)))
            bytes[20] ^= 1
            try Data(bytes).write(to: URL(fileURLWithPath: file))
            #expect(SmallDigestTable(directory: folder.path + "/cache", maxEntries: 4).lookup(keys[5]) == nil)
        }
    }

    @Test func theCacheDirectoryFollowsXDG() {
        let directory = DigestCache.standardDirectory
        #expect(directory(["XDG_CACHE_HOME": "/c", "HOME": "/h"]) == "/c/ferry/digests")
        #expect(directory(["XDG_CACHE_HOME": "c", "HOME": "/h"]) == "/h/.cache/ferry/digests", "relative: ignored")
        #expect(directory(["HOME": "/h"]) == "/h/.cache/ferry/digests")
        #expect(directory([:]) == nil)
    }
}
