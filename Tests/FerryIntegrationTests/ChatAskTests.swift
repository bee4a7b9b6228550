import FerryTestSupport
import Foundation
import Testing

/// Issue 28, 10: `ferry chat` let anyone in. First contact is now as for transfers: on a terminal each stranger is a
/// question with its device ID and the link's pairing code, answered y, n or a in the chat's input line, whichever
/// side dialled; a stranger's lines are shown only once it was let in; a refused peer's screen says it was not
/// accepted; pinned peers join without a question; `--accept trusted`, and a chat whose stdin is no terminal, refuse
/// strangers without asking.
extension IntegrationTests {
    @Suite(.serialized) struct ChatAskTests {
        static let waitingLine = "(still waiting for your answer"

        /// Types `key` as the answer about `name` until the pane shows the answer's line (`* you let carol in`),
        /// retyping an answer the chat ignored as typed too soon after the question.
        static func answer(_ pane: TerminalPane, _ key: String, about name: String) throws {
            let line = key == "n" ? "* you did not let \(name) in" : "* you let \(name) in"
            try InteractiveReceiveTests.answer(pane, key, echo: InteractiveReceiveTests.lines(line))
        }

        /// Answers y on each pane (`pane`, the name it is asked about) as its question appears, in whichever order
        /// they come (the lower peer ID dials: one side is asked first, the other once the first said yes); returns
        /// the pairing code each question showed. `typingMeanwhile`: before the first answer, type a line that is no
        /// answer, which is sent as usual (nobody is in yet) while the question stays.
        static func letEachOtherIn(_ sides: [(pane: TerminalPane, other: String)], typingMeanwhile: Bool = false)
            throws -> [String]
        {
            var pending = sides
            var codes: [String] = []
            var typedMeanwhile = !typingMeanwhile
            let deadline = ContinuousClock.now + .seconds(120)
            while !pending.isEmpty, ContinuousClock.now < deadline {
                for (index, side) in pending.enumerated() {
                    let screen = try side.pane.text()
                    guard screen.contains("? Let \(side.other) in? [y]es, [n]o, [a]lways") else { continue }
                    #expect(!screen.contains("* \(side.other) joined"), "\(screen)")
                    let question = screen.split(separator: "\n").first { $0.hasPrefix("? \(side.other) wants") }
                    let code = question?.components(separatedBy: "pairing code ").last?.prefix(7) ?? ""
                    codes.append(String(code))
                    if !typedMeanwhile {
                        typedMeanwhile = true
                        try side.pane.type("hello, anyone?")
                        try side.pane.waitFor(Self.waitingLine)
                        #expect(try side.pane.text().contains("no peer is connected yet"))
                    }
                    try Self.answer(side.pane, "y", about: side.other)
                    pending.remove(at: index)
                    break
                }
                Thread.sleep(forTimeInterval: 0.05)  // polling the screens, as TerminalPane.waitFor does
            }
            #expect(pending.isEmpty, "not asked: \(pending.map(\.other))")
            return codes
        }

        /// A stranger for bob's chat: `ferry chat --json --mode server --accept all` (bob dials a server, so the
        /// link is one bob opened, and carol lets bob in without asking).
        static func carol(_ harness: ChatHarness, _ extra: [String] = ["--mode", "server"]) throws -> FerryProcess {
            try harness.chat("carol", extra + ["--accept", "all"]).process
        }

        @Test func twoStrangersAreAskedWithTheSameCodeAndChatOnceBothSaidYes() async throws {
            let harness = try ChatHarness()
            let alice = try ChatTerminalTests.pane(harness, "alice", accept: nil)
            defer { alice.close() }
            let bob = try ChatTerminalTests.pane(harness, "bob", accept: nil)
            defer { bob.close() }
            let codes = try Self.letEachOtherIn([(alice, "bob"), (bob, "alice")], typingMeanwhile: true)
            #expect(codes.count == 2 && codes[0] == codes[1] && codes[0].count == 7, "\(codes)")
            try alice.waitFor("* bob joined: not trusted")
            try bob.waitFor("* alice joined: not trusted")
            try alice.type("hello bob")
            try bob.waitFor("<alice> hello bob")
        }

        @Test func aStrangerThisChatReachedIsShownOnlyOnceLetInWithWhatItWroteMeanwhile() async throws {
            let harness = try ChatHarness()
            let bob = try ChatTerminalTests.pane(harness, "bob", accept: nil)
            defer { bob.close() }
            let carol = try Self.carol(harness)
            try carol.waitForEvent("connected", peer: "bob")
            try carol.send(line: "written before bob answered")
            _ = try carol.nextJSON { $0["event"] as? String == "sent" }
            let asked = try bob.waitFor("? Let carol in?")
            #expect(!asked.contains("written before bob answered"), "\(asked)")
            #expect(!asked.contains("* carol joined"), "\(asked)")
            try Self.answer(bob, "y", about: "carol")
            let screen = try bob.waitFor("<carol> written before bob answered")
            let lines = ChatTerminalTests.lines(screen)
            let joined = try #require(lines.firstIndex { $0.hasPrefix("* carol joined: not trusted") }, "\(screen)")
            let shown = try #require(lines.firstIndex { $0 == "<carol> written before bob answered" })
            #expect(joined < shown, "\(screen)")
        }

        @Test func aStrangerRefusedWithNoIsToldSoAndWhatItWroteIsNeverShown() async throws {
            let harness = try ChatHarness()
            let bob = try ChatTerminalTests.pane(harness, "bob", accept: nil)
            defer { bob.close() }
            let carol = try Self.carol(harness)
            try carol.waitForEvent("connected", peer: "bob")
            try carol.send(line: "never show this")
            _ = try carol.nextJSON { $0["event"] as? String == "sent" }
            try bob.waitFor("? Let carol in?")
            try Self.answer(bob, "n", about: "carol")
            let told = try carol.waitForError(containing: "did not accept you")
            #expect(told == "bob did not accept you into the chat", "\(told)")
            try carol.waitForEvent("disconnected", peer: "bob")
            // After carol's link ended, a line bob types reaches nobody (and shows nothing of carol's).
            try bob.type("/peers")
            let screen = try bob.waitFor("NAME")
            #expect(!screen.contains("never show this"), "\(screen)")
            #expect(!screen.contains("* carol joined"), "\(screen)")
        }

        @Test func aStrangerAskingToJoinIsAskedInJSONTooAndDeniedOnNo() async throws {
            let harness = try ChatHarness()
            let bob = try ChatTerminalTests.pane(harness, "bob", accept: nil, ["--mode", "server", "--json"])
            defer { bob.close() }
            // carol dials bob (a server): bob's session holds carol's request while bob's person is asked.
            let carol = try Self.carol(harness, [])
            let asked = try bob.waitFor(#""event":"question""#)
            #expect(asked.contains(#""trusted":false"#), "\(asked)")
            #expect(asked.contains(#""code":""#), "\(asked)")
            #expect(!asked.contains(#""event":"connected""#), "\(asked)")
            let before = InteractiveReceiveTests.count(#""answer":"deny""#, in: asked)
            try InteractiveReceiveTests.answer(bob, "n") {
                InteractiveReceiveTests.count(#""answer":"deny""#, in: $0) > before ? 1 : 0
            }
            let told = try carol.waitForError(containing: "did not accept you")
            #expect(told == "bob did not accept you into the chat", "\(told)")
            // The question and its answer have the keys docs/EVENTS.md lists, and nothing else.
            let document = try EventsDocument.load(besides: #filePath)
            let lines = ChatTerminalTests.lines(try bob.text())
            #expect(lines.contains { $0.contains(#""event":"answer""#) }, "\(lines)")
            #expect(document.undocumented(in: lines, command: "ferry chat --json") == [], "\(lines)")
        }

        @Test func trustedOnlyRefusesAStrangerWithoutAsking() async throws {
            let harness = try ChatHarness()
            let bob = try ChatTerminalTests.pane(harness, "bob", accept: "trusted")
            defer { bob.close() }
            let carol = try Self.carol(harness)
            let told = try carol.waitForError(containing: "did not accept you")
            #expect(told == "bob did not accept you into the chat (only trusted peers are accepted)", "\(told)")
            try bob.waitFor("* refused carol: not trusted (device ")
            // Refused once: bob does not dial carol again (carol is available again once the link ended).
            try bob.type("/peers")
            let screen = try bob.waitFor("NAME")
            #expect(InteractiveReceiveTests.count("* refused carol", in: screen) == 1, "\(screen)")
            #expect(screen.contains("ferry trust add "), "\(screen)")
            #expect(!screen.contains("wants to chat"), "\(screen)")
            #expect(!screen.contains("* carol joined"), "\(screen)")
        }

        @Test func aPinnedPeerJoinsWithoutAQuestion() async throws {
            let harness = try ChatHarness()
            try await harness.trust(try await harness.deviceID(of: "alice"), as: "alice", by: "bob")
            let bob = try ChatTerminalTests.pane(harness, "bob", accept: nil)
            defer { bob.close() }
            let (alice, _) = try harness.chat("alice")
            try alice.waitForEvent("connected", peer: "bob")
            try alice.send(line: "it is me")
            let screen = try bob.waitFor("<alice> it is me")
            #expect(screen.contains("* alice joined: trusted, key verified"), "\(screen)")
            #expect(!screen.contains("wants to chat"), "\(screen)")
        }

        @Test func withoutATerminalNobodyIsAskedAndOnlyTrustedPeersJoin() async throws {
            let harness = try ChatHarness()
            let (bob, _) = try harness.chat("bob", ["--accept", "ask"])
            let carol = try Self.carol(harness)
            let told = try carol.waitForError(containing: "did not accept you")
            #expect(told == "bob did not accept you into the chat (only trusted peers are accepted)", "\(told)")
            let status = try bob.terminate()
            let errors = try bob.readAllStderr(timeout: .seconds(30))
            #expect(errors.contains("Note: stdin is not a terminal, so no one can be asked"), "\(errors) \(status)")
        }
    }
}
