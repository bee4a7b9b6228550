import Foundation
import FerryTestSupport
import Testing

extension IntegrationTests {
    /// Issue 28, 6: a file `ferry watch` sends again after it changed takes the place of the version it delivered
    /// (PROTOCOL.md 11.10 rule 11), never of a file another peer delivered or a local user edited.
    @Suite(.serialized) struct WatchReplaceTests {
        /// Writes `text` elsewhere, then moves it over `name` in `directory` (how an editor or a camera finishes).
        static func put(_ text: String, as name: String, in directory: String, harness: TransferHarness) throws {
            let scratch = harness.source.path + "/scratch-\(UUID().uuidString)"
            try Data(text.utf8).write(to: URL(fileURLWithPath: scratch))
            guard rename(scratch, directory + "/" + name) == 0 else { throw CocoaError(.fileWriteUnknown) }
        }

        static func watcher(_ directory: String, _ name: String, port: Int, _ harness: TransferHarness) throws
            -> FerryProcess
        {
            let process = try harness.chat.registry.startFerry(
                [
                    "watch", directory, "--to", "127.0.0.1:\(port)", "--json", "--session", harness.session,
                    "--interface", "lo", "--name", name,
                ],
                environment: harness.chat.environment(name))
            _ = try process.nextJSON { $0["event"] as? String == "watching" }
            return process
        }

        /// The receiver's next `file` event for `name` from `peer`: the name it was published under, and whether the
        /// file took the place of the version before (`replaced`).
        static func published(_ name: String, from peer: String, _ receiver: FerryProcess) throws -> String? {
            let event = try receiver.nextJSON(timeout: .seconds(60)) {
                $0["event"] as? String == "file" && $0["name"] as? String == name && $0["peer"] as? String == peer
            }
            let published = event["publishedName"] as? String
            return event["replaced"] as? Bool == true ? "replaced " + (published ?? "") : published
        }

        static func text(_ path: String) throws -> String {
            String(decoding: try Data(contentsOf: URL(fileURLWithPath: path)), as: UTF8.self)
        }

        @Test func aChangedWatchedFileReplacesOnlyTheVersionItsWatcherDeliveredUnchanged() throws {
            let harness = try TransferHarness()
            let watched = try TemporaryDirectory(prefix: "ferry-watched")
            defer { watched.remove() }
            let other = try TemporaryDirectory(prefix: "ferry-watched-other")
            defer { other.remove() }
            let inbox = harness.inbox.path
            let (receiver, port) = try harness.receiver(once: false)
            let camera = try Self.watcher(watched.path, "camera", port: port, harness)
            try Self.put("version 1\n", as: "slow.txt", in: watched.path, harness: harness)
            #expect(try Self.published("slow.txt", from: "camera", receiver) == "slow.txt")
            // Changed: the new version takes the old one's place, no "slow (1).txt" beside it.
            try Self.put("version 2, longer\n", as: "slow.txt", in: watched.path, harness: harness)
            let second = try Self.published("slow.txt", from: "camera", receiver)
            let listed = try FileManager.default.subpathsOfDirectory(atPath: inbox)
            #expect(second == "replaced slow.txt", "\(second ?? "nil") \(listed)")
            #expect(try Self.text(inbox + "/slow.txt") == "version 2, longer\n")
            #expect(try TransferHarness.visibleFiles(in: inbox).keys.sorted() == ["slow.txt"])
            // Another peer's watcher sends a file of that name: it never replaces camera's file.
            let phone = try Self.watcher(other.path, "phone", port: port, harness)
            try Self.put("the phone's\n", as: "slow.txt", in: other.path, harness: harness)
            #expect(try Self.published("slow.txt", from: "phone", receiver) == "slow (1).txt")
            #expect(try Self.text(inbox + "/slow.txt") == "version 2, longer\n")
            // A local edit of the delivered file: the watcher's next version goes beside it.
            try Data("edited here\n".utf8).write(to: URL(fileURLWithPath: inbox + "/slow.txt"))
            try Self.put("version 3\n", as: "slow.txt", in: watched.path, harness: harness)
            #expect(try Self.published("slow.txt", from: "camera", receiver) == "slow (2).txt")
            #expect(try Self.text(inbox + "/slow.txt") == "edited here\n")
            #expect(try Self.text(inbox + "/slow (1).txt") == "the phone's\n")
            #expect(try Self.text(inbox + "/slow (2).txt") == "version 3\n")
            for process in [camera, phone, receiver] { _ = try process.terminate() }
        }
    }
}
