import Foundation
import FerryTestSupport
import Testing

/// Issue 28, 7, with real processes: trust is one-way, so each side pins the other. A receiver that pinned the
/// sender still shows the code the sender's person is asked to compare (it said only "trusted, key verified", and
/// the sender could never answer yes), and `ferry trust add NAME` on the receiver's install pins a peer that only
/// sends (it failed with "no peer named outbox was found": a sender accepts no connections).
extension IntegrationTests {
    @Suite(.serialized) struct OneWayTrustTests {
        /// `ferry receive --accept ACCEPT` in text (a service's log), as the install "inbox"; its port.
        static func textReceiver(_ harness: TransferHarness, accept: String) throws -> (FerryProcess, Int) {
            let receiver = try harness.chat.registry.startFerry(
                [
                    "receive", "--into", harness.inbox.path, "--accept", accept, "--session", harness.session,
                    "--name", "inbox", "--port", "0", "--interface", "lo",
                ],
                environment: harness.chat.environment("inbox"))
            let listening = try receiver.waitForErrorLine { $0.contains("receiving into") }
            let port = try #require(Int(listening.split(separator: "port ").last?.prefix { $0.isNumber } ?? ""))
            return (receiver, port)
        }

        @Test func aReceiverThatPinnedTheSenderShowsTheCodeTheSenderIsAskedAbout() async throws {
            let harness = try TransferHarness()
            let file = try harness.files.random("one-way.bin", size: 1500)
            try await harness.chat.trust(try await harness.chat.deviceID(of: "outbox"), as: "outbox", by: "inbox")
            let (receiver, port) = try Self.textReceiver(harness, accept: "ask")
            let pane = try PairingTests.terminalSender(harness, [file.path], port: port)
            defer { pane.close() }
            let screen = try pane.waitFor("? [y]es")
            let question = try #require(screen.components(separatedBy: "Does inbox show ").last)
            let code = String(question.prefix(7))  // "123 456"
            #expect(code.count == 7 && code.filter(\.isNumber).count == 6, "\(screen)")
            let line = try receiver.waitForErrorLine { $0.contains("outbox") && $0.contains("connected") }
            #expect(line.contains("trusted, key verified"), "\(line)")
            #expect(line.contains("pairing code \(code)"), "\(line)")
            try pane.type("y")
            let (status, end) = try pane.waitForExit()
            #expect(status == 0, "\(end)")
            #expect(try TransferHarness.visibleFiles(in: harness.inbox.path) == ["one-way.bin": 1500])
            _ = try receiver.terminate()
        }

        /// The record keeps links whose code a person saw (here a service's log line, `--accept ask` with no one to
        /// ask): `trust add` pins under the name the person typed, not the one the stranger chose, and says honestly
        /// which code to compare (the one the sender's screen showed when it sent).
        @Test func trustAddNamePinsASenderThatConnectedToThisInstallsReceiver() async throws {
            let harness = try TransferHarness()
            let file = try harness.files.random("later.bin", size: 700)
            let outboxID = try await PairingTests.groupedID(of: "outbox", in: harness)
            let (receiver, port) = try Self.textReceiver(harness, accept: "ask")
            #expect(try harness.send([file.path], to: [port]).status == 1)
            _ = try receiver.waitForErrorLine { $0.contains("outbox") && $0.contains("pairing code") }
            // On the receiver's machine (its install): the sender is not reachable, yet its name is enough.
            let pane = try TerminalPane(
                ["trust", "add", "OUTBOX", "--session", harness.session, "--interface", "lo", "--wait", "1"],
                environment: harness.chat.environment("inbox"), name: "pinsender")
            defer { pane.close() }
            try pane.waitFor("outbox (device \(outboxID)) connected to this install's 'ferry receive'")
            try pane.waitFor("the code its screen showed when it sent")
            try pane.waitFor("Trust it? [y/N]")
            try pane.type("y")
            let (status, screen) = try pane.waitForExit()
            #expect(status == 0 && screen.contains("Trusted 'OUTBOX' (\(outboxID))"), "\(screen)")
            // The running receiver follows the file: the next send from outbox is taken.
            _ = try receiver.waitForErrorLine { $0.contains("now trusting") && $0.contains("OUTBOX") }
            #expect(try harness.send([file.path], to: [port]).status == 0)
            #expect(try TransferHarness.visibleFiles(in: harness.inbox.path) == ["later.bin": 700])
            _ = try receiver.terminate()
        }

        /// A link the receiver refused by itself showed its code to no one: it is not proposed to `trust add`
        /// (anyone may connect with fresh keys, and such links filled the record before).
        @Test func aRefusedLinkIsNotProposedToTrustAdd() async throws {
            let harness = try TransferHarness()
            let file = try harness.files.random("refused.bin", size: 300)
            let (receiver, port) = try Self.textReceiver(harness, accept: "trusted")
            #expect(try harness.send([file.path], to: [port]).status == 1)
            _ = try receiver.waitForErrorLine { $0.contains("refused the connection of") }
            let pane = try TerminalPane(
                ["trust", "add", "outbox", "--session", harness.session, "--interface", "lo", "--wait", "1"],
                environment: harness.chat.environment("inbox"), name: "refusedpin")
            defer { pane.close() }
            let (status, screen) = try pane.waitForExit(timeout: .seconds(40))
            #expect(status == 1 && screen.contains("no peer named outbox was found"), "\(screen)")
            #expect(!screen.contains("connected to this install's"), "\(screen)")
            _ = try receiver.terminate()
        }

        /// `trust add NAME` asks discovery first: a live peer of that name is compared over a live link, and a
        /// recorded link of the same name (an older one, or a stranger's) is not offered instead.
        @Test func trustAddNamePrefersTheLivePeerToTheRecord() async throws {
            let harness = try TransferHarness()
            let inboxID = try await PairingTests.groupedID(of: "inbox", in: harness)
            let config = harness.chat.environment("outbox")["XDG_CONFIG_HOME"]! + "/ferry"
            try FileManager.default.createDirectory(
                atPath: config, withIntermediateDirectories: true, attributes: [.posixPermissions: 0o700])
            let stranger = String(repeating: "ab", count: 32)
            let line = #"{"at":"2026-01-01T00:00:00Z","code":"111111","deviceID":"\#(stranger)","name":"inbox"}"#
            #expect(
                FileManager.default.createFile(
                    atPath: config + "/recent-peers", contents: Data((line + "\n").utf8),
                    attributes: [.posixPermissions: 0o600]))
            let (receiver, _) = try harness.receiver(accept: "all", once: false)
            let pane = try TerminalPane(
                ["trust", "add", "inbox", "--session", harness.session, "--interface", "lo"],
                environment: harness.chat.environment("outbox"), name: "livefirst")
            defer { pane.close() }
            try pane.waitFor("Does inbox show \(try PairingTests.receiverCode(receiver))?", timeout: .seconds(40))
            #expect(try pane.text().contains(inboxID))
            try pane.type("y")
            let (status, screen) = try pane.waitForExit()
            #expect(status == 0 && screen.contains("Trusted 'inbox' (\(inboxID))"), "\(screen)")
            #expect(!screen.contains("connected to this install's"), "\(screen)")
            _ = try receiver.terminate()
        }
    }
}
