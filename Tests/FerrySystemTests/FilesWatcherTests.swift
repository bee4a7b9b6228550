import FerryTestSupport
import Glibc
import Testing

@testable import FerrySystem

/// DirectoryWatcher: complete files are reported, directories are not, and the record parser never traps.
@Suite("DirectoryWatcher")
struct FilesWatcherTests {
    /// Collects events until `count` have arrived, giving up (and failing) after a generous bound.
    private func collect(_ watcher: DirectoryWatcher, _ reactor: Reactor, count: Int) async throws -> [WatchEvent] {
        try await withThrowingTaskGroup(of: [WatchEvent]?.self) { group in
            group.addTask {
                var events: [WatchEvent] = []
                while events.count < count { events += try await watcher.next() }
                return events
            }
            group.addTask {
                try await reactor.sleep(until: .now + .seconds(60))
                return nil
            }
            defer { group.cancelAll() }
            let first = try await group.next() ?? nil
            return try #require(first, "timed out waiting for \(count) events")
        }
    }

    @Test func reportsClosedAndMovedInFilesButNotDirectories() async throws {
        try await withReactor { reactor in
            try await TemporaryDirectory.with(prefix: "ferry-files") { directory in
                let root = directory.path
                #expect(mkdir(root + "/watched", 0o755) == 0)
                let watcher = try DirectoryWatcher(path: root + "/watched", reactor: reactor)
                defer { watcher.close() }
                #expect(mkdir(root + "/watched/newdir", 0o755) == 0)
                #expect(mkdir(root + "/outside-dir", 0o755) == 0)
                #expect(rename(root + "/outside-dir", root + "/watched/moved-dir") == 0)
                try writeFile(root + "/watched/written.txt")
                try writeFile(root + "/outside.txt")
                #expect(rename(root + "/outside.txt", root + "/watched/moved.txt") == 0)
                let events = try await collect(watcher, reactor, count: 2)
                #expect(events == [.fileReady(name: "written.txt"), .fileReady(name: "moved.txt")])
            }
        }
    }

    @Test func deletedDirectoryIsGoneAndTheWatcherCloses() async throws {
        try await withReactor { reactor in
            try await TemporaryDirectory.with(prefix: "ferry-files") { directory in
                let root = directory.path
                #expect(mkdir(root + "/watched", 0o755) == 0)
                let watcher = try DirectoryWatcher(path: root + "/watched", reactor: reactor)
                #expect(rmdir(root + "/watched") == 0)
                let events = try await collect(watcher, reactor, count: 1)
                #expect(events == [.gone])
                await #expect(throws: ReactorError.closed) { _ = try await watcher.next() }
                #expect(reactor.openDescriptorCount == 0)
            }
        }
    }

    @Test func closeEndsAPendingNext() async throws {
        try await withReactor { reactor in
            try await TemporaryDirectory.with(prefix: "ferry-files") { directory in
                let root = directory.path
                let watcher = try DirectoryWatcher(path: root, reactor: reactor)
                let pending = Task { try await watcher.next() }
                try await waitUntil(reactor, "next() suspended") { watcher.registration.suspendedWaiterCount == 1 }
                watcher.close()
                await #expect(throws: ReactorError.closed) { _ = try await pending.value }
            }
        }
    }

    @Test func missingDirectoryAndFileAreErrors() async throws {
        try await withReactor { reactor in
            try await TemporaryDirectory.with(prefix: "ferry-files") { directory in
                let root = directory.path
                #expect(throws: SystemError.self) {
                    _ = try DirectoryWatcher(path: root + "/missing", reactor: reactor)
                }
                try writeFile(root + "/file")
                let error = #expect(throws: SystemError.self) {
                    _ = try DirectoryWatcher(path: root + "/file", reactor: reactor)
                }
                #expect(error?.errno == .notDirectory)
                #expect(reactor.openDescriptorCount == 0)
            }
        }
    }

    /// One inotify record as the kernel lays it out.
    private func record(watch: Int32, mask: Int32, name: [UInt8] = [], padTo: Int? = nil) -> [UInt8] {
        var field = name
        if !field.isEmpty { field += [UInt8](repeating: 0, count: (padTo ?? (name.count + 1)) - name.count) }
        var bytes: [UInt8] = []
        withUnsafeBytes(of: watch) { bytes += $0 }
        withUnsafeBytes(of: UInt32(bitPattern: mask)) { bytes += $0 }
        withUnsafeBytes(of: UInt32(0)) { bytes += $0 }
        withUnsafeBytes(of: UInt32(field.count)) { bytes += $0 }
        return bytes + field
    }

    @Test func parserHandlesEveryKindOfRecord() {
        let buffer =
            record(watch: 1, mask: IN_CLOSE_WRITE, name: Array("a.txt".utf8), padTo: 16)
            + record(watch: 1, mask: IN_MOVED_TO | IN_ISDIR, name: Array("dir".utf8))
            + record(watch: 2, mask: IN_CLOSE_WRITE, name: Array("other-watch".utf8))
            + record(watch: 1, mask: IN_CLOSE_WRITE, name: [0xFF, 0xFE])  // not UTF-8: skipped
            + record(watch: 1, mask: IN_CLOSE_WRITE)  // no name: skipped
            + record(watch: -1, mask: IN_Q_OVERFLOW)
            + record(watch: -1, mask: IN_Q_OVERFLOW)
            + record(watch: 1, mask: IN_MOVED_TO, name: Array("Zoë.jpg".utf8))
            + record(watch: 1, mask: IN_DELETE_SELF)
            + record(watch: 1, mask: IN_IGNORED)
        #expect(
            DirectoryWatcher.parse(buffer, watch: 1) == [
                .fileReady(name: "a.txt"), .overflow, .fileReady(name: "Zoë.jpg"), .gone,
            ])
        let whole = record(watch: 1, mask: IN_CLOSE_WRITE, name: Array("a".utf8))
        for length in 0..<whole.count {
            #expect(DirectoryWatcher.parse(Array(whole[..<length]), watch: 1) == [])
        }
        var huge = record(watch: 1, mask: IN_CLOSE_WRITE)
        huge.replaceSubrange(12..<16, with: [0xFF, 0xFF, 0xFF, 0xFF])
        #expect(DirectoryWatcher.parse(huge, watch: 1) == [])
    }

    @Test func parserNeverTrapsOnRandomBytes() {
        var state: UInt64 = 0x5EED
        for round in 0..<2000 {
            let bytes = patternBytes(count: round % 97, seed: state)
            state &+= 0x9E37_79B9_7F4A_7C15
            for event in DirectoryWatcher.parse(bytes, watch: Int32(bitPattern: UInt32(bytes.first ?? 0))) {
                if case .fileReady(let name) = event { #expect(!name.isEmpty && !name.utf8.contains(0)) }
            }
        }
    }
}
