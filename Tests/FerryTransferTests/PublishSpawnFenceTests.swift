import FerrySystem
import FerryTestSupport
import Foundation
import Glibc
import Synchronization
import Testing

@testable import FerryTransfer

/// A process that embeds the receiving engine and starts children (the test process itself does) must not let a
/// child's copy of a staged file's descriptor outlive the rename: a watcher of the receive directory would see the
/// published file closed after writing a second time. `SpawnFence` keeps spawns out of the close-to-rename window.
@Suite struct PublishSpawnFenceTests {
    /// 400 files are published from open staged descriptors while another thread starts `/bin/true` children as fast
    /// as it can, each through `SpawnFence.spawning` (as every spawn of the test support does). Every published name
    /// shows up exactly once, as a rename, never as a close after writing. Without the fence (publish closing and
    /// renaming outside it) children started between the close and the rename close their copies later, and this
    /// fails (seen: 2 to 5 of 150 names on every run).
    @Test func childrenStartedWhilePublishingNeverCloseAPublishedFile() async throws {
        try await TemporaryDirectory.with(prefix: "fence") { temporary in
            let directory = try ReceiveDirectory(path: temporary.path)
            let recorder = try InotifyRecorder(directory: temporary.path)
            let stop = Atomic<Bool>(false)
            let spawnerEnded = DispatchSemaphore(value: 0)
            let spawner = Thread {
                defer { spawnerEnded.signal() }
                while !stop.load(ordering: .relaxed) {
                    let child = Process()
                    child.executableURL = URL(fileURLWithPath: "/bin/true")
                    guard (try? child.runFenced()) != nil else { break }
                    child.waitUntilExit()
                }
            }
            spawner.start()
            defer {  // the last child is waited for before the directory goes, also when the test fails
                stop.store(true, ordering: .relaxed)
                spawnerEnded.wait()
            }
            let count = 400
            do {
                for index in 0..<count {
                    let key = String(repeating: "0", count: 60) + String(format: "%04x", index)
                    let (file, _) = try directory.stagedFile(key: key)
                    try file.write(Array(repeating: UInt8(index & 0xff), count: 4096), at: 0)
                    _ = try directory.publish(
                        key: key, components: ["file-\(index)"], permissions: 0o644, modificationTime: (0, 0),
                        staged: file, size: 4096)
                }
            } catch {
                _ = recorder.stop()
                throw error
            }
            let events = recorder.stop().filter {
                $0.name != InotifyRecorder.stopName && $0.name != ".ferry-staging"
            }
            let closedAfterPublishing = events.filter { $0.mask & UInt32(IN_CLOSE_WRITE) != 0 }
            #expect(closedAfterPublishing.isEmpty, "\(closedAfterPublishing.count) published files closed again")
            let renamed = events.filter { $0.mask == UInt32(IN_MOVED_TO) }
            #expect(renamed.count == count && Set(renamed.map(\.name)).count == count)
        }
    }
}
