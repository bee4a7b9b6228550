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
                [
                    "watch", watched.path, "--to", "127.0.0.1:\(port)", "--json", "--session", harness.session,
                    "--interface", "lo", "--name", "camera",
                ],
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
            // A last file after the two: the watcher handles changes in order, so a second send of either (a late
            // event for a file already sent) would be queued before this one arrives.
            try Data("the end".utf8).write(to: URL(fileURLWithPath: watched.path + "/last.txt"))
            // Both sides have said they are done with it (the sender's line comes after the receiver's answer).
            for process in [receiver, watcher] {
                _ = try process.nextJSON(timeout: .seconds(60)) {
                    $0["event"] as? String == "file" && $0["name"] as? String == "last.txt"
                }
            }
            _ = try watcher.terminate()
            _ = try receiver.terminate()
            // Sent once over the whole run: every line each side printed, from start until the watcher stopped.
            let expected = ["first.jpg": 1, "second.txt": 1, "last.txt": 1]
            #expect(Self.count("queued", in: watcher) == expected, "\(watcher.allStdoutLines)")
            #expect(Self.count("file", in: watcher) == expected, "\(watcher.allStdoutLines)")
            #expect(Self.count("file", in: receiver) == expected, "\(receiver.allStdoutLines)")
            #expect(
                try TransferHarness.visibleFiles(in: harness.inbox.path)
                    == ["first.jpg": 200_000, "second.txt": 70_000, "last.txt": 7])
            #expect(
                try TransferHarness.sha256(harness.inbox.path + "/first.jpg")
                    == TransferHarness.sha256(watched.path + "/first.jpg"))
        }

        /// How many `event` lines `process` printed for each file name, over its whole output.
        static func count(_ event: String, in process: FerryProcess) -> [String: Int] {
            var counts: [String: Int] = [:]
            for line in process.allStdoutLines {
                guard let data = line.data(using: .utf8),
                    let object = try? JSONSerialization.jsonObject(with: data) as? [String: Any],
                    object["event"] as? String == event, let name = object["name"] as? String
                else { continue }
                counts[name, default: 0] += 1
            }
            return counts
        }
    }
}
