import Foundation
import FerryTestSupport
import Testing

/// Issue 28, 9, with real processes on a terminal: a display name is chosen by whoever runs a peer, so another
/// device calling itself by the name of a pinned peer must neither block `--to NAME` (it failed with `'inbox'
/// matches 2 peers`) nor receive the files meant for the pinned one. The pinned device wins, with a warning that
/// names the other (short device ID and address); when only the other answers, nothing is sent and the screen
/// says why.
extension IntegrationTests {
    @Suite(.serialized) struct PinnedNameTests {
        /// `ferry receive --json --accept all` calling itself "inbox" with the key of the install "impostor".
        static func impostor(_ harness: TransferHarness, into directory: TemporaryDirectory) throws -> FerryProcess {
            let process = try harness.chat.registry.startFerry(
                [
                    "receive", "--json", "--into", directory.path, "--accept", "all", "--session", harness.session,
                    "--name", "inbox", "--port", "0", "--interface", "lo",
                ],
                environment: harness.chat.environment("impostor"))
            _ = try process.nextJSON { $0["event"] as? String == "listening" }
            return process
        }

        /// `ferry send FILE --to inbox` (by name, found by discovery) on a terminal, as the install "outbox".
        static func sendByName(_ harness: TransferHarness, _ path: String, wait: Int) throws -> TerminalPane {
            try TerminalPane(
                [
                    "send", path, "--to", "inbox", "--session", harness.session, "--name", "outbox", "--interface",
                    "lo", "--wait", "\(wait)",
                ],
                environment: harness.chat.environment("outbox"), name: "byname")
        }

        @Test func thePinnedDeviceGetsTheFilesThoughAnotherUsesItsNameAndTheOtherIsNamed() async throws {
            let harness = try TransferHarness()
            let file = try harness.files.random("meant.bin", size: 2000)
            let elsewhere = try TemporaryDirectory(prefix: "ferry-impostor")
            defer { elsewhere.remove() }
            try await harness.chat.trust(try await harness.chat.deviceID(of: "inbox"), as: "inbox", by: "outbox")
            let inboxShort = String(try await PairingTests.groupedID(of: "inbox", in: harness).prefix(9))
            let impostorShort = String(try await PairingTests.groupedID(of: "impostor", in: harness).prefix(9))
            let impostor = try Self.impostor(harness, into: elsewhere)
            let pane = try Self.sendByName(harness, file.path, wait: 120)
            defer { pane.close() }
            // Only the other device answers so far: the sender says so and waits for the pinned one.
            try pane.waitFor("'inbox' is pinned to device \(inboxShort), which is not here")
            let (receiver, _) = try harness.receiver(accept: "all", once: true)
            let (status, screen) = try pane.waitForExit()
            #expect(status == 0, "\(screen)")
            #expect(!screen.contains("matches 2 peers"), "\(screen)")
            #expect(screen.contains("another device also calls itself 'inbox': inbox (\(impostorShort) at 127.0.0.1:"))
            #expect(screen.contains("sending to the one you trusted, \(inboxShort)"), "\(screen)")
            #expect(try receiver.waitForExit(timeout: .seconds(60)) == 0)
            #expect(try TransferHarness.visibleFiles(in: harness.inbox.path) == ["meant.bin": 2000])
            #expect(try TransferHarness.visibleFiles(in: elsewhere.path).isEmpty)
            _ = try impostor.terminate()
        }

        @Test func whenOnlyAnotherDeviceAnswersToAPinnedNameNothingIsSentAndTheScreenSaysWhy() async throws {
            let harness = try TransferHarness()
            let file = try harness.files.random("kept.bin", size: 500)
            let elsewhere = try TemporaryDirectory(prefix: "ferry-impostor")
            defer { elsewhere.remove() }
            try await harness.chat.trust(try await harness.chat.deviceID(of: "inbox"), as: "inbox", by: "outbox")
            let inboxShort = String(try await PairingTests.groupedID(of: "inbox", in: harness).prefix(9))
            let impostorShort = String(try await PairingTests.groupedID(of: "impostor", in: harness).prefix(9))
            let impostor = try Self.impostor(harness, into: elsewhere)
            let pane = try Self.sendByName(harness, file.path, wait: 3)
            defer { pane.close() }
            let (status, screen) = try pane.waitForExit()
            #expect(status == 1, "\(screen)")
            #expect(screen.contains("'inbox' is pinned to device \(inboxShort), which is not here"), "\(screen)")
            #expect(screen.contains("inbox (\(impostorShort) at 127.0.0.1:"), "\(screen)")
            #expect(screen.contains("the trusted device did not appear"), "\(screen)")
            #expect(try TransferHarness.visibleFiles(in: elsewhere.path).isEmpty)
            _ = try impostor.terminate()
        }
    }
}
