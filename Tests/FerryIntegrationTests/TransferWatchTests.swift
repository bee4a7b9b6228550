import Foundation
import FerryTestSupport
import Testing

extension IntegrationTests {
    /// `ferry watch DIR --to PEER`: files that appear in DIR go to the peer, once each; hidden and temporary ones do not.
    @Suite(.serialized) struct TransferWatchTests {
        @Test func filesThatAppearAreSentOnceAndTemporaryOnesAreSkipped() throws {
            let harness = try TransferHarness()
            let watched = try TemporaryDirectory(prefix: "ferry-watched")
            defer { watched.remove() }
            try Data("already here".utf8).write(to: URL(fileURLWithPath: watched.path + "/old.txt"))
            let (receiver, port) = try harness.receiver(once: false)
            let watcher = try harness.chat.registry.startFerry(
                ["watch", watched.path, "--to", "127.0.0.1:\(port)", "--json", "--session", harness.session,
                 "--interface", "lo", "--name", "camera"],
                environment: harness.chat.environment("camera"))
            _ = try watcher.nextJSON { $0["event"] as? String == "watching" }
            // Written elsewhere, then moved in (how cameras and browsers finish a file), and written in place.
            let first = try harness.files.random("first.jpg", size: 200_000, seed: 7)
            try FileManager.default.moveItem(atPath: first.path, toPath: watched.path + "/first.jpg")
            try Data("partial".utf8).write(to: URL(fileURLWithPath: watched.path + "/.hidden"))
            try Data("partial".utf8).write(to: URL(fileURLWithPath: watched.path + "/draft.txt.part"))
            try Data(repeating: 65, count: 70_000).write(to: URL(fileURLWithPath: watched.path + "/second.txt"))
            var received = Set<String>()
            while received.count < 2 {
                let event = try receiver.nextJSON(timeout: .seconds(60)) { $0["event"] as? String == "file" }
                received.insert(event["name"] as? String ?? "")
            }
            #expect(received == ["first.jpg", "second.txt"])
            #expect(
                try TransferHarness.visibleFiles(in: harness.inbox.path) == ["first.jpg": 200_000, "second.txt": 70_000])
            #expect(try TransferHarness.sha256(harness.inbox.path + "/first.jpg")
                == TransferHarness.sha256(watched.path + "/first.jpg"))
            _ = try watcher.terminate()
            _ = try receiver.terminate()
        }
    }
}
