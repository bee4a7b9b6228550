import Foundation
import FerryTestSupport
import Testing

extension IntegrationTests {
    /// A receiver left running (a service) follows its trusted-peers file: a peer pinned with `ferry trust add` in
    /// another terminal is accepted without a restart, and one removed with `ferry trust remove` is refused again.
    @Suite(.serialized) struct TrustReloadTests {
        @Test func aPeerPinnedWhileTheReceiverRunsIsAcceptedAndUnpinningRefusesItAgain() async throws {
            let harness = try TransferHarness()
            let files = try (0..<3).map { try harness.files.random("f\($0).bin", size: 2000) }
            let sender = try await harness.chat.deviceID(of: "outbox")
            let receiver = try harness.chat.registry.startFerry(
                [
                    "receive", "--into", harness.inbox.path, "--accept", "trusted", "--session", harness.session,
                    "--name", "inbox", "--port", "0", "--interface", "lo",
                ],
                environment: harness.chat.environment("inbox"))
            defer { _ = try? receiver.terminate() }
            let listening = try receiver.waitForErrorLine { $0.contains("receiving into") }
            let port = try #require(Int(listening.split(separator: "port ").last?.prefix { $0.isNumber } ?? ""))

            // Not pinned yet: refused.
            var result = try harness.send([files[0].path], to: [port])
            #expect(result.status == 1, "\(result.summary ?? [:])")
            _ = try receiver.waitForErrorLine { $0.contains("refused the connection of outbox") }

            // Pinned in another process while the receiver runs: it says so, and the next send is accepted.
            try await harness.chat.trust(sender, as: "outbox", by: "inbox")
            let added = try receiver.waitForErrorLine { $0.contains("trusted peers changed") }
            #expect(added.contains("now trusting outbox"), "\(added)")
            result = try harness.send([files[1].path], to: [port])
            #expect(result.status == 0, "\(result.summary ?? [:]) \(receiver.capturedOutput())")

            // Unpinned: refused again.
            let remove = try harness.chat.registry.startFerry(
                ["trust", "remove", sender], environment: harness.chat.environment("inbox"))
            #expect(try await remove.finish(timeout: .seconds(60)).status == 0)
            let removed = try receiver.waitForErrorLine { $0.contains("trusted peers changed") }
            #expect(removed.contains("no longer trusting outbox"), "\(removed)")
            result = try harness.send([files[2].path], to: [port])
            #expect(result.status == 1, "\(result.summary ?? [:])")

            #expect(try TransferHarness.visibleFiles(in: harness.inbox.path) == ["f1.bin": 2000])
        }
    }
}
