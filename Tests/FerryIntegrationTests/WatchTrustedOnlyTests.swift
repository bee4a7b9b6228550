import FerryTestSupport
import Foundation
import Testing

/// Issue 9 (scripts refuse unpinned receivers), for `ferry watch`: with `--trusted-only` a receiver this install
/// has not pinned gets nothing, not even an offer, and the watcher says why; a pinned one gets the files.
extension IntegrationTests {
    @Suite(.serialized) struct WatchTrustedOnlyTests {
        /// `ferry watch DIR --to 127.0.0.1:PORT --trusted-only --json` as the install "outbox"; returns once it
        /// watches.
        static func watcher(_ harness: TransferHarness, _ directory: String, port: Int) throws -> FerryProcess {
            let process = try harness.chat.registry.startFerry(
                [
                    "watch", directory, "--to", "127.0.0.1:\(port)", "--trusted-only", "--json", "--session",
                    harness.session, "--interface", "lo", "--name", "outbox",
                ],
                environment: harness.chat.environment("outbox"))
            _ = try process.nextJSON { $0["event"] as? String == "watching" }
            return process
        }

        @Test func trustedOnlyWatchSendsNothingToAnUnpinnedReceiver() async throws {
            let harness = try TransferHarness()
            try await TemporaryDirectory.with(prefix: "ferry-watched") { watched in
                let (receiver, port) = try harness.receiver(accept: "all", once: false)
                let watcher = try Self.watcher(harness, watched.path, port: port)
                try Data(repeating: 7, count: 5000).write(to: URL(fileURLWithPath: watched.path + "/new.bin"))
                let error = try watcher.nextJSON(timeout: .seconds(60)) { $0["event"] as? String == "error" }
                let message = error["message"] as? String ?? ""
                #expect(message.contains("--trusted-only") && message.contains("ferry trust add"), "\(error)")
                #expect(!watcher.allStdoutLines.contains { $0.contains("\"event\":\"started\"") })
                #expect(!receiver.allStdoutLines.contains { $0.contains("\"event\":\"started\"") })
                #expect(try TransferHarness.visibleFiles(in: harness.inbox.path).isEmpty)
                _ = try watcher.terminate()
                _ = try receiver.terminate()
            }
        }

        @Test func trustedOnlyWatchSendsToAPinnedReceiver() async throws {
            let harness = try TransferHarness()
            let inbox = try await harness.chat.deviceID(of: "inbox")
            try await harness.chat.trust(inbox, as: "inbox", by: "outbox")
            try await TemporaryDirectory.with(prefix: "ferry-watched") { watched in
                let (receiver, port) = try harness.receiver(accept: "all", once: false)
                let watcher = try Self.watcher(harness, watched.path, port: port)
                try Data(repeating: 7, count: 5000).write(to: URL(fileURLWithPath: watched.path + "/new.bin"))
                let file = try receiver.nextJSON(timeout: .seconds(60)) { $0["event"] as? String == "file" }
                #expect(file["name"] as? String == "new.bin")
                #expect(try TransferHarness.visibleFiles(in: harness.inbox.path) == ["new.bin": 5000])
                _ = try watcher.terminate()
                _ = try receiver.terminate()
            }
        }
    }
}
