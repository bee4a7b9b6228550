import FerryTestSupport
import Foundation
import Testing

/// Issue 13, "JSON" and "the README's chat example": real `ferry` processes print only events and keys that
/// docs/EVENTS.md documents, the README's JSON lines have the keys chat prints in the order it prints them, and
/// the README's chat transcript is what two chats on terminals show.
extension IntegrationTests {
    @Suite(.serialized) struct JSONEventProcessTests {
        static let packageRoot = URL(fileURLWithPath: #filePath).deletingLastPathComponent()
            .deletingLastPathComponent().deletingLastPathComponent()

        static func readme() throws -> String {
            try String(contentsOf: packageRoot.appendingPathComponent("README.md"), encoding: .utf8)
        }

        /// The lines of the first fenced block after the line that contains `marker`.
        static func block(after marker: String, in text: String) throws -> [String] {
            let lines = text.split(separator: "\n", omittingEmptySubsequences: false).map(String.init)
            let start = try #require(lines.firstIndex { $0.contains(marker) }, "README has no \(marker)")
            let open = try #require(lines[start...].firstIndex { $0.hasPrefix("```") })
            let close = try #require(lines[(open + 1)...].firstIndex { $0.hasPrefix("```") })
            return Array(lines[(open + 1)..<close])
        }

        @Test func chatPrintsOnlyDocumentedEventsAndTheReadmeLinesHaveItsKeys() throws {
            let document = try EventsDocument.load(besides: #filePath)
            let harness = try ChatHarness()
            let (alice, _) = try harness.chat("alice")
            let (bob, _) = try harness.chat("bob")
            try alice.waitForEvent("connected", peer: "bob")
            try bob.waitForEvent("connected", peer: "alice")
            try bob.send(line: "hello")
            _ = try alice.nextMessage()
            _ = try bob.nextJSON { $0["event"] as? String == "sent" }
            for line in ["/peers", "/help", "/nope"] { try alice.send(line: line) }
            _ = try alice.nextJSON { $0["event"] as? String == "peerInfo" }
            _ = try alice.nextJSON { $0["event"] as? String == "notice" }
            _ = try alice.waitForError(containing: "unknown command")
            try bob.send(line: "/quit")
            #expect(try bob.waitForExit(timeout: .seconds(60)) == 0)
            try alice.waitForEvent("disconnected", peer: "bob")
            alice.closeStdin()
            #expect(try alice.waitForExit(timeout: .seconds(60)) == 0)
            let printed = alice.allStdoutLines + bob.allStdoutLines
            #expect(document.undocumented(in: printed, command: "ferry chat --json") == [])
            let events = Set(printed.compactMap { TransferHarness.json($0)?["event"] as? String })
            #expect(
                events.isSuperset(of: [
                    "ready", "connected", "message", "sent", "peerInfo", "notice", "error", "disconnected",
                ]), "\(events)")
            // The README's example lines: documented, and with the keys chat printed, in its order.
            let readme = try Self.block(after: "its first key always", in: try Self.readme())
            #expect(!readme.isEmpty)
            #expect(document.undocumented(in: readme, command: "ferry chat --json") == [])
            for line in readme {
                let event = TransferHarness.json(line)?["event"] as? String
                let same = printed.filter { TransferHarness.json($0)?["event"] as? String == event }
                let keys = EventsDocument.keys(of: line)
                #expect(
                    same.contains { EventsDocument.keys(of: $0) == keys },
                    "README's \(line) does not have the keys chat prints: \(same)")
            }
        }

        @Test func peersSendAndReceivePrintOnlyDocumentedEvents() throws {
            let document = try EventsDocument.load(besides: #filePath)
            let harness = try TransferHarness()
            let (receiver, port) = try harness.receiver()
            let peers = try harness.chat.peers()
            _ = try peers.nextJSON { $0["event"] as? String == "peer" && $0["name"] as? String == "inbox" }
            _ = try peers.terminate()
            let file = try harness.files.random("a.bin", size: 300_000)
            let sender = try harness.sender([file.path], to: [port])
            #expect(try sender.waitForExit(timeout: .seconds(240)) == 0, "\(sender.capturedOutput())")
            #expect(try receiver.waitForExit(timeout: .seconds(60)) == 0)
            #expect(document.undocumented(in: peers.allStdoutLines, command: "ferry peers --json") == [])
            let transfers = sender.allStdoutLines + receiver.allStdoutLines
            #expect(document.undocumented(in: transfers, command: "ferry send|receive|watch --json") == [])
            let events = Set(transfers.compactMap { TransferHarness.json($0)?["event"] as? String })
            #expect(
                events.isSuperset(of: ["listening", "connected", "started", "progress", "file", "finished", "summary"]),
                "\(events)")
        }

        @Test func watchPrintsOnlyDocumentedEvents() throws {
            let document = try EventsDocument.load(besides: #filePath)
            let harness = try TransferHarness()
            let watched = try TemporaryDirectory(prefix: "ferry-watched")
            defer { watched.remove() }
            let (receiver, port) = try harness.receiver(once: false)
            let watcher = try harness.chat.registry.startFerry(
                [
                    "watch", watched.path, "--to", "127.0.0.1:\(port)", "--json", "--session", harness.session,
                    "--interface", "lo", "--name", "camera",
                ],
                environment: harness.chat.environment("camera"))
            _ = try watcher.nextJSON { $0["event"] as? String == "watching" }
            try Data(repeating: 65, count: 70_000).write(to: URL(fileURLWithPath: watched.path + "/new.txt"))
            _ = try watcher.nextJSON(timeout: .seconds(60)) { $0["event"] as? String == "file" }
            _ = try watcher.terminate()
            _ = try receiver.terminate()
            let lines = watcher.allStdoutLines + receiver.allStdoutLines
            #expect(document.undocumented(in: lines, command: "ferry send|receive|watch --json") == [])
            let events = Set(lines.compactMap { TransferHarness.json($0)?["event"] as? String })
            #expect(events.isSuperset(of: ["watching", "queued", "connected", "file", "finished"]), "\(events)")
        }

        /// Two chats on terminals, started as the README's quick start shows: bob's screen has the README's
        /// transcript, line by line in order (other lines, such as "* alice is here", may come between).
        @Test func theReadmeChatTranscriptIsWhatChatShows() throws {
            let transcript = try Self.block(after: "ReadmeChatExampleTests", in: try Self.readme())
            let command = try #require(transcript.first, "no transcript")
            #expect(command.hasPrefix("$ ferry "))
            let arguments = command.dropFirst("$ ferry ".count).split(separator: " ").map(String.init)
            let harness = try ChatHarness()
            let extra = ["--session", harness.session, "--interface", "lo", "--port", "0"]
            let alice = try TerminalPane(
                ["chat", "--name", "alice"] + extra, environment: harness.environment("alice"), name: "alice")
            defer { alice.close() }
            try alice.waitFor("Type /help for commands.")
            let bob = try TerminalPane(arguments + extra, environment: harness.environment("bob"), name: "bob")
            defer { bob.close() }
            // Strangers to each other: each is asked about the other and says yes (issue 28, 10).
            _ = try ChatAskTests.letEachOtherIn([(alice, "bob"), (bob, "alice")])
            try alice.waitFor("* bob joined")
            try bob.waitFor("* alice joined")
            try alice.type("hello bob")
            try bob.waitFor("<alice> hello bob")
            try bob.type("hi alice")
            try alice.waitFor("<bob> hi alice")
            func normalized(_ line: String) -> String {
                line.replacingOccurrences(of: "'\(harness.session)'", with: "'ferry'")
                    .replacingOccurrences(of: #"\(port [0-9]+\)"#, with: "(port N)", options: .regularExpression)
                    // The join line's device and code differ on every run (issue 28, 10).
                    .replacingOccurrences(
                        of: #"device [A-Z2-7]{4}-[A-Z2-7]{4}"#, with: "device AAAA-AAAA", options: .regularExpression
                    )
                    .replacingOccurrences(
                        of: #"pairing code [0-9]{3} [0-9]{3}"#, with: "pairing code 123 456",
                        options: .regularExpression
                    )
                    .trimmingCharacters(in: .whitespaces)
            }
            let screen = try bob.text().split(separator: "\n").map { normalized(String($0)) }
            var rest = screen[...]
            for expected in transcript.dropFirst().map(normalized) {
                let found = rest.firstIndex(of: expected)
                #expect(found != nil, "bob's screen lacks '\(expected)' (in order): \(screen)")
                if let found { rest = rest[(found + 1)...] }
            }
        }
    }
}
