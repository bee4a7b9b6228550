import Foundation
import FerryTestSupport
import Testing

/// Issue 9, parts 1 and 2, with real processes: a headless receiver accepts pinned senders and refuses strangers
/// with a line that names them; the sender confirms the pairing code on a terminal before anything leaves;
/// `--trusted-only` for scripts; `ferry trust add NAME` pins a running receiver by comparing codes.
///
/// Headless receivers run with stdin on a pipe (not a terminal); the terminal cases run under tmux
/// (`TerminalPane`), where stdin and stderr are ttys and answers are typed keys.
extension IntegrationTests {
    @Suite(.serialized) struct PairingTests {
        /// The grouped device ID (`ferry id --json` `deviceID`) of the install `name`.
        static func groupedID(of name: String, in harness: TransferHarness) async throws -> String {
            let process = try harness.chat.registry.startFerry(
                ["id", "--json"], environment: harness.chat.environment(name))
            let (_, lines, _) = try await process.finish(timeout: .seconds(60))
            let object = lines.compactMap(TransferHarness.json).first
            return try #require(object?["deviceID"] as? String, "ferry id --json: \(lines)")
        }

        /// `ferry send FILE --to 127.0.0.1:PORT` (text, no --json) on a terminal, as the install "outbox".
        static func terminalSender(
            _ harness: TransferHarness, _ paths: [String], port: Int, _ extra: [String] = []
        ) throws -> TerminalPane {
            try TerminalPane(
                ["send"] + paths + [
                    "--to", "127.0.0.1:\(port)", "--session", harness.session, "--name", "outbox",
                    "--interface", "lo",
                ] + extra,
                environment: harness.chat.environment("outbox"), name: "send")
        }

        static func stderrText(_ process: FerryProcess) -> String {
            process.allStderrLines.joined(separator: "\n")
        }

        // MARK: Headless receivers

        @Test func aPinnedSenderIsAcceptedByAHeadlessAskReceiver() async throws {
            let harness = try TransferHarness()
            let file = try harness.files.random("pinned.bin", size: 3000)
            let sender = try await harness.chat.deviceID(of: "outbox")
            try await harness.chat.trust(sender, as: "outbox", by: "inbox")
            let (receiver, port) = try harness.receiver(accept: "ask", once: true)
            let result = try harness.send([file.path], to: [port])
            #expect(result.status == 0, "\(result.summary ?? [:])")
            #expect(try receiver.waitForExit(timeout: .seconds(60)) == 0, "\(receiver.capturedOutput())")
            #expect(try TransferHarness.visibleFiles(in: harness.inbox.path) == ["pinned.bin": 3000])
        }

        @Test func aStrangerIsRefusedByAHeadlessAskReceiverWithALineNamingIt() async throws {
            let harness = try TransferHarness()
            let file = try harness.files.random("stranger.bin", size: 3000)
            let senderID = try await Self.groupedID(of: "outbox", in: harness)
            // Text output: the line a headless operator reads in the log.
            let receiver = try harness.chat.registry.startFerry(
                [
                    "receive", "--into", harness.inbox.path, "--accept", "ask", "--session", harness.session, "--name",
                    "inbox", "--port", "0", "--interface", "lo",
                ],
                environment: harness.chat.environment("inbox"))
            let listening = try receiver.waitForErrorLine { $0.contains("receiving into") }
            let port = try #require(Int(listening.split(separator: "port ").last?.prefix { $0.isNumber } ?? ""))
            let before = try DirectorySnapshot(of: URL(fileURLWithPath: harness.inbox.path))
            let sent = try harness.sender([file.path], to: [port])
            let (status, lines, errors) = try await sent.finish(timeout: .seconds(120))
            #expect(status == 1)
            let denial = lines.compactMap(TransferHarness.json).first { $0["event"] as? String == "denied" }
            let reason = denial?["reason"] as? String ?? ""
            #expect(reason.contains("nobody is there to answer"), "\(lines) \(errors)")
            #expect(!reason.contains("denied by the user"))
            let line = try receiver.waitForErrorLine { $0.contains("refused a transfer from") }
            #expect(line.contains("outbox (device \(senderID))"), "\(line)")
            #expect(line.contains("ferry trust add \(senderID)"), "\(line)")
            let after = try DirectorySnapshot(of: URL(fileURLWithPath: harness.inbox.path))
            #expect(after.added(since: before).isEmpty, "\(after)")
            _ = try receiver.terminate()
        }

        @Test func aHeadlessJSONReceiverReportsTheRefusalAsAnEventWithTheDeviceID() async throws {
            let harness = try TransferHarness()
            let file = try harness.files.random("json.bin", size: 100)
            let senderID = try await Self.groupedID(of: "outbox", in: harness)
            let (receiver, port) = try harness.receiver(accept: "ask", once: false)
            #expect(try harness.send([file.path], to: [port]).status == 1)
            let denied = try receiver.nextJSON {
                $0["event"] as? String == "denied" && $0["direction"] as? String == "receiving"
            }
            #expect(denied["deviceID"] as? String == senderID)
            #expect(denied["peer"] as? String == "outbox")
            _ = try receiver.terminate()
        }

        @Test func acceptTrustedRefusesTheConnectionWithALineAndTellsTheSenderWhy() async throws {
            let harness = try TransferHarness()
            let file = try harness.files.random("t.bin", size: 100)
            let senderID = try await Self.groupedID(of: "outbox", in: harness)
            let receiver = try harness.chat.registry.startFerry(
                [
                    "receive", "--into", harness.inbox.path, "--accept", "trusted", "--session", harness.session,
                    "--name", "inbox", "--port", "0", "--interface", "lo",
                ],
                environment: harness.chat.environment("inbox"))
            let listening = try receiver.waitForErrorLine { $0.contains("receiving into") }
            let port = try #require(Int(listening.split(separator: "port ").last?.prefix { $0.isNumber } ?? ""))
            let sent = try harness.sender([file.path], to: [port])
            let (status, lines, errors) = try await sent.finish(timeout: .seconds(120))
            #expect(status == 1)
            #expect(
                (lines.joined() + errors).contains("inbox accepts trusted peers only"), "\(lines) \(errors)")
            let line = try receiver.waitForErrorLine { $0.contains("refused the connection of") }
            #expect(line.contains("outbox (device \(senderID))") && line.contains("not trusted"), "\(line)")
            #expect(try TransferHarness.visibleFiles(in: harness.inbox.path).isEmpty)
            _ = try receiver.terminate()
        }

        @Test func trustedOnlyRefusesAnUnpinnedReceiverBeforeAnythingIsSent() async throws {
            let harness = try TransferHarness()
            let file = try harness.files.random("only.bin", size: 100)
            let (receiver, port) = try harness.receiver(accept: "all", once: false)
            let before = try DirectorySnapshot(of: URL(fileURLWithPath: harness.inbox.path))
            let sent = try harness.sender([file.path], to: [port], ["--trusted-only"])
            let (status, lines, errors) = try await sent.finish(timeout: .seconds(120))
            #expect(status == 1)
            #expect((lines.joined() + errors).contains("--trusted-only"), "\(lines) \(errors)")
            #expect(!lines.contains { $0.contains("\"event\":\"started\"") })
            let after = try DirectorySnapshot(of: URL(fileURLWithPath: harness.inbox.path))
            #expect(after.added(since: before).isEmpty, "\(after)")
            _ = try receiver.terminate()
        }

        // MARK: The sender on a terminal

        /// The receiver's pairing code, from its `connected` event (shown at link-up, before any offer).
        static func receiverCode(_ receiver: FerryProcess) throws -> String {
            let connected = try receiver.nextJSON(timeout: .seconds(60)) { $0["event"] as? String == "connected" }
            let code = try #require(connected["code"] as? String)
            return String(code.prefix(3)) + " " + String(code.dropFirst(3))
        }

        @Test func answeringNoSendsNothingAndExitsOne() async throws {
            let harness = try TransferHarness()
            let file = try harness.files.random("no.bin", size: 200_000)
            let (receiver, port) = try harness.receiver(accept: "all", once: false)
            let before = try DirectorySnapshot(of: URL(fileURLWithPath: harness.inbox.path))
            let pane = try Self.terminalSender(harness, [file.path], port: port)
            defer { pane.close() }
            let code = try Self.receiverCode(receiver)
            try pane.waitFor("Does inbox show \(code)?")
            try pane.type("n")
            let (status, screen) = try pane.waitForExit()
            #expect(status == 1, "\(screen)")
            #expect(screen.contains("nothing was sent"), "\(screen)")
            let after = try DirectorySnapshot(of: URL(fileURLWithPath: harness.inbox.path))
            #expect(after.added(since: before).isEmpty, "\(after)")
            #expect(!receiver.allStdoutLines.contains { $0.contains("\"event\":\"offer\"") || $0.contains("started") })
            _ = try receiver.terminate()
        }

        @Test func answeringYesSends() async throws {
            let harness = try TransferHarness()
            let file = try harness.files.random("yes.bin", size: 200_000)
            let (receiver, port) = try harness.receiver(accept: "all", once: true)
            let pane = try Self.terminalSender(harness, [file.path], port: port)
            defer { pane.close() }
            let code = try Self.receiverCode(receiver)
            try pane.waitFor("Does inbox show \(code)?")
            try pane.type("y")
            let (status, screen) = try pane.waitForExit()
            #expect(status == 0, "\(screen)")
            #expect(try receiver.waitForExit(timeout: .seconds(60)) == 0)
            #expect(try TransferHarness.visibleFiles(in: harness.inbox.path) == ["yes.bin": 200_000])
        }

        @Test func answeringAlwaysSendsAndPinsTheReceiver() async throws {
            let harness = try TransferHarness()
            let file = try harness.files.random("always.bin", size: 1000)
            let inboxID = try await Self.groupedID(of: "inbox", in: harness)
            let (receiver, port) = try harness.receiver(accept: "all", once: true)
            let pane = try Self.terminalSender(harness, [file.path], port: port)
            defer { pane.close() }
            let code = try Self.receiverCode(receiver)
            try pane.waitFor("Does inbox show \(code)?")
            try pane.type("a")
            let (status, screen) = try pane.waitForExit()
            #expect(status == 0, "\(screen)")
            #expect(try receiver.waitForExit(timeout: .seconds(60)) == 0)
            let list = try harness.chat.registry.startFerry(
                ["trust", "list", "--json"], environment: harness.chat.environment("outbox"))
            let (_, lines, _) = try await list.finish(timeout: .seconds(60))
            #expect(lines.contains { $0.contains(inboxID) && $0.contains("\"inbox\"") }, "\(lines)")
        }

        /// Two receivers: each is asked about in turn; the one denied gets nothing and its line in the summary,
        /// the other gets the file.
        @Test func withTwoReceiversADeniedOneIsSkippedAndTheOtherGetsTheFile() async throws {
            let harness = try TransferHarness()
            let other = try TemporaryDirectory(prefix: "ferry-inbox2")
            defer { other.remove() }
            let file = try harness.files.random("two.bin", size: 1000)
            let (first, firstPort) = try harness.receiver("inbox", accept: "all", once: false)
            let (second, secondPort) = try harness.receiver("second", into: other.path, accept: "all", once: false)
            let before = try DirectorySnapshot(of: URL(fileURLWithPath: other.path))
            let pane = try Self.terminalSender(
                harness, [file.path], port: firstPort, ["--to", "127.0.0.1:\(secondPort)"])
            defer { pane.close() }
            let firstCode = try Self.receiverCode(first)
            let secondCode = try Self.receiverCode(second)
            try pane.waitFor("Does inbox show \(firstCode)?")
            try pane.type("y")
            try pane.waitFor("Does second show \(secondCode)?")
            try pane.type("n")
            let (status, screen) = try pane.waitForExit()
            #expect(status == 1, "\(screen)")
            #expect(screen.contains("  inbox: ok"), "\(screen)")
            #expect(screen.contains("  second: failed: you did not confirm its pairing code"), "\(screen)")
            #expect(try TransferHarness.visibleFiles(in: harness.inbox.path) == ["two.bin": 1000])
            let after = try DirectorySnapshot(of: URL(fileURLWithPath: other.path))
            #expect(after.added(since: before).isEmpty, "\(after)")
            _ = try first.terminate()
            _ = try second.terminate()
        }

        @Test func aPinnedReceiverIsNotAsked() async throws {
            let harness = try TransferHarness()
            let file = try harness.files.random("pinned.bin", size: 1000)
            let inbox = try await harness.chat.deviceID(of: "inbox")
            try await harness.chat.trust(inbox, as: "inbox", by: "outbox")
            let (receiver, port) = try harness.receiver(accept: "all", once: true)
            let pane = try Self.terminalSender(harness, [file.path], port: port)
            defer { pane.close() }
            let (status, screen) = try pane.waitForExit()
            #expect(status == 0, "\(screen)")
            #expect(!screen.contains("Does inbox show"), "\(screen)")
            #expect(try receiver.waitForExit(timeout: .seconds(60)) == 0)
        }

        @Test func trustAddByNamePinsTheReceiverAndALaterSendIsNotAsked() async throws {
            let harness = try TransferHarness()
            let file = try harness.files.random("later.bin", size: 1000)
            let inboxID = try await Self.groupedID(of: "inbox", in: harness)
            let (receiver, port) = try harness.receiver(accept: "all", once: false)
            let pane = try TerminalPane(
                ["trust", "add", "inbox", "--session", harness.session, "--interface", "lo"],
                environment: harness.chat.environment("outbox"), name: "trust")
            defer { pane.close() }
            let code = try Self.receiverCode(receiver)
            try pane.waitFor(inboxID)
            try pane.waitFor("Does inbox show \(code)?")
            try pane.type("y")
            let (status, screen) = try pane.waitForExit()
            #expect(status == 0, "\(screen)")
            let list = try harness.chat.registry.startFerry(
                ["trust", "list", "--json"], environment: harness.chat.environment("outbox"))
            let (_, lines, _) = try await list.finish(timeout: .seconds(60))
            #expect(lines.contains { $0.contains(inboxID) && $0.contains("\"inbox\"") }, "\(lines)")
            let send = try Self.terminalSender(harness, [file.path], port: port)
            defer { send.close() }
            let (sent, sendScreen) = try send.waitForExit()
            #expect(sent == 0, "\(sendScreen)")
            #expect(!sendScreen.contains("Does inbox show"), "\(sendScreen)")
            _ = try receiver.terminate()
        }

        /// Issue 28, 8: `--trusted-only` suggests `ferry trust add ABCD-EFGH` (the short ID), which was refused as
        /// "not a valid device ID". It finds the receiver by that start of its ID and pins it once the codes match.
        @Test func theShortIDThatTrustedOnlySuggestsPinsTheReceiver() async throws {
            let harness = try TransferHarness()
            let file = try harness.files.random("short.bin", size: 100)
            let inboxID = try await Self.groupedID(of: "inbox", in: harness)
            let (receiver, port) = try harness.receiver(accept: "all", once: false)
            let refused = try harness.sender([file.path], to: [port], ["--trusted-only"])
            let (_, lines, _) = try await refused.finish(timeout: .seconds(120))
            let short = String(inboxID.prefix(9))
            #expect(lines.joined().contains("ferry trust add \(short)"), "\(lines)")
            _ = try receiver.nextJSON(timeout: .seconds(60)) { $0["event"] as? String == "connected" }
            let pane = try TerminalPane(
                ["trust", "add", short, "--session", harness.session, "--interface", "lo"],
                environment: harness.chat.environment("outbox"), name: "short")
            defer { pane.close() }
            try pane.waitFor("Does inbox show \(try Self.receiverCode(receiver))?")
            try pane.type("y")
            let (status, screen) = try pane.waitForExit()
            #expect(status == 0 && screen.contains(inboxID), "\(screen)")
            let list = try harness.chat.registry.startFerry(
                ["trust", "list", "--json"], environment: harness.chat.environment("outbox"))
            let (_, listed, _) = try await list.finish(timeout: .seconds(60))
            #expect(listed.contains { $0.contains(inboxID) && $0.contains("\"inbox\"") }, "\(listed)")
            _ = try receiver.terminate()
        }

        @Test func trustAddByAddressPinsTheReceiverAndANoPinsNothing() async throws {
            let harness = try TransferHarness()
            let inboxID = try await Self.groupedID(of: "inbox", in: harness)
            let (receiver, port) = try harness.receiver(accept: "all", once: false)
            let arguments = ["trust", "add", "--peer", "127.0.0.1:\(port)", "--session", harness.session]
            let refused = try TerminalPane(arguments, environment: harness.chat.environment("outbox"), name: "no")
            defer { refused.close() }
            try refused.waitFor("Does inbox show \(try Self.receiverCode(receiver))?")
            try refused.type("n")
            let (refusedStatus, refusedScreen) = try refused.waitForExit()
            #expect(refusedStatus == 1 && refusedScreen.contains("was not trusted"), "\(refusedScreen)")
            let pane = try TerminalPane(arguments, environment: harness.chat.environment("outbox"), name: "yes")
            defer { pane.close() }
            try pane.waitFor("Does inbox show \(try Self.receiverCode(receiver))?")
            try pane.type("y")
            let (status, screen) = try pane.waitForExit()
            #expect(status == 0 && screen.contains("Trusted 'inbox' (\(inboxID))"), "\(screen)")
            let list = try harness.chat.registry.startFerry(
                ["trust", "list", "--json"], environment: harness.chat.environment("outbox"))
            let (_, lines, _) = try await list.finish(timeout: .seconds(60))
            #expect(lines.count(where: { $0.contains(inboxID) }) == 1, "\(lines)")
            _ = try receiver.terminate()
        }
    }
}
