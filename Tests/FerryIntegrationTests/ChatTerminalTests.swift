import FerryTestSupport
import Foundation
import Testing

/// Issue 13, "chat on a terminal": on a real terminal (tmux) a line that arrives never breaks the line being typed,
/// `/help` explains the datagram marker; and a peer that only receives files is never announced as a member.
extension IntegrationTests {
    @Suite(.serialized) struct ChatTerminalTests {
        /// `ferry chat` (text) named `name` in a pane of its own, once it printed its first line.
        /// `ferry chat` on a terminal; `accept` all by default (these tests are about the screen, not first contact:
        /// ChatAskTests), nil for the default (ask).
        static func pane(_ harness: ChatHarness, _ name: String, accept: String? = "all", _ extra: [String] = [])
            throws -> TerminalPane
        {
            let pane = try TerminalPane(
                ["chat", "--session", harness.session, "--name", name, "--port", "0", "--interface", "lo"]
                    + (accept.map { ["--accept", $0] } ?? []) + extra,
                environment: harness.environment(name), name: name)
            try pane.waitFor(extra.contains("--json") ? #""event":"ready""# : "Type /help for commands.")
            return pane
        }

        /// The pane's lines with trailing blanks removed.
        static func lines(_ screen: String) -> [String] {
            var lines = screen.split(separator: "\n", omittingEmptySubsequences: false).map {
                String($0.reversed().drop { $0 == " " }.reversed())
            }
            while lines.last == "" { lines.removeLast() }
            return lines
        }

        @Test func anIncomingLineIsPrintedAboveTheHalfTypedLineWhichStaysWhole() throws {
            let harness = try ChatHarness()
            let bob = try Self.pane(harness, "bob")
            defer { bob.close() }
            let (alice, _) = try harness.chat("alice")
            try alice.waitForEvent("connected", peer: "bob")
            try bob.waitFor("* alice joined")
            try bob.typeKeys("half a li")
            try bob.waitFor("half a li")
            try alice.send(line: "incoming words")
            let screen = Self.lines(try bob.waitFor("<alice> incoming words"))
            let index = try #require(screen.firstIndex { $0.contains("<alice> incoming words") }, "\(screen)")
            #expect(screen[index] == "<alice> incoming words", "the message broke into the typed line: \(screen)")
            #expect(screen.dropFirst(index + 1).first == "half a li", "the typed line is not below it: \(screen)")
            // The line typed on goes out whole.
            try bob.type("ne")
            #expect(try alice.nextMessage().text == "half a line")
            try bob.type("/help")
            let help = try bob.waitFor("marks a line that came as a datagram")
            #expect(help.contains("a ~ after the sender's name, as in <bob~> hi,"), "\(help)")
        }

        /// The chat gives the terminal back as it found it (echo on), whether it ends by `/quit` or by Ctrl-D: after
        /// the chat, the pane runs `cat`, and what is typed to it shows only when the terminal echoes. (Ctrl-C is not
        /// tried here: tmux sends its SIGINT to the pane's whole process group, the shell that runs `cat` included.)
        @Test(arguments: ["/quit", "C-d"]) func theTerminalEchoesAgainAfterTheChat(ending: String) throws {
            let harness = try ChatHarness()
            let pane = try Self.pane(harness, "solo")
            defer { pane.close() }
            try pane.typeKeys("half")
            try pane.waitFor("half")
            try pane.press("C-u")
            if ending.hasPrefix("/") { try pane.type(ending) } else { try pane.press(ending) }
            let (status, _) = try pane.waitForExit()
            #expect(status == 0)
            try pane.typeKeys("echoed-after-the-chat")
            try pane.waitFor("echoed-after-the-chat", timeout: .seconds(20))
        }

        /// A `ferry receive` in the chat's session is not announced, asked, or written to: its beacon (seen in
        /// the chat's `-vv` log) comes before bob's, and the chat's events are printed in the order they happen, so
        /// once bob joined, any line about the receiver would have been printed already.
        @Test func aPeerThatOnlyReceivesFilesIsNotAChatMember() throws {
            let harness = try TransferHarness()
            let (receiver, _) = try harness.receiver("inbox", once: false)
            let (alice, _) = try harness.chat.chat("alice", ["-v", "-v"])
            _ = try alice.waitForErrorLine { $0.contains("beacon from") && $0.contains(": inbox ") }
            let (bob, _) = try harness.chat.chat("bob")
            try alice.waitForEvent("connected", peer: "bob")
            try alice.send(line: "hello")
            #expect(try bob.nextMessage().text == "hello")
            let sent = try alice.nextJSON { $0["event"] as? String == "sent" }
            #expect(sent["peers"] as? Int == 1, "the line went to someone besides bob: \(sent)")
            try alice.send(line: "/peers")
            let row = try alice.nextJSON { $0["event"] as? String == "peerInfo" }
            #expect((row["peer"] as? [String: Any])?["name"] as? String == "bob")
            for (name, process) in [("alice", alice), ("bob", bob)] {
                let named = process.allStdoutLines.filter { $0.contains("\"name\":\"inbox\"") }
                #expect(named == [], "\(name) announced the receiver: \(named)")
            }
            #expect(!receiver.allStdoutLines.contains { $0.contains("\"event\":\"connected\"") })
        }
    }
}
