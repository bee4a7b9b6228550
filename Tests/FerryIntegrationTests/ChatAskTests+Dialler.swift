import FerryTestSupport
import Foundation
import Testing

/// Issue 28, 10 (review H1): the side that dials a stranger knows the link's pairing code before the stranger's
/// person answers, and shows it, so that both people can compare it while one of them is asked.
extension IntegrationTests.ChatAskTests {
    @Test func theSideThatDialsShowsThePairingCodeWhileTheOtherIsAsked() throws {
        let harness = try ChatHarness()
        let alice = try IntegrationTests.ChatTerminalTests.pane(harness, "alice", accept: nil)
        defer { alice.close() }
        let bob = try IntegrationTests.ChatTerminalTests.pane(harness, "bob", accept: nil)
        defer { bob.close() }
        // The lower peer ID dials: whichever side is asked first, the other dialled it.
        let sides = [(pane: alice, name: "alice", other: "bob"), (pane: bob, name: "bob", other: "alice")]
        var asked: (pane: TerminalPane, name: String, other: String)?
        var question = ""
        let deadline = ContinuousClock.now + .seconds(120)
        while asked == nil, ContinuousClock.now < deadline {
            for side in sides {
                let screen = try side.pane.text()
                if let line = screen.split(separator: "\n").first(where: { $0.hasPrefix("? \(side.other) wants") }) {
                    asked = side
                    question = String(line)
                    break
                }
            }
            Thread.sleep(forTimeInterval: 0.05)  // polling the screens, as TerminalPane.waitFor does
        }
        let acceptor = try #require(asked, "nobody was asked")
        let dialler = sides.first { $0.name != acceptor.name }!
        let code = String(question.components(separatedBy: "pairing code ").last?.prefix(7) ?? "")
        #expect(code.count == 7, "\(question)")
        // Nobody answered yet: the dialler already shows the code its peer is asked to compare.
        let screen = try dialler.pane.waitFor("* waiting for \(acceptor.name) to let you in: pairing code \(code)")
        #expect(!screen.contains("* \(acceptor.name) joined"), "\(screen)")
        #expect(!(try acceptor.pane.text()).contains("* you let"), "answered already")
    }
}

extension IntegrationTests.ChatAskTests {
    /// Review M1: `--accept none` denies every request, and let in without a question any stranger it dialled.
    @Test func acceptNoneRefusesAStrangerItDialledAsItRefusesARequest() throws {
        let harness = try ChatHarness()
        let (bob, _) = try harness.chat("bob", ["--accept", "none"])
        let carol = try Self.carol(harness)
        let told = try carol.waitForError(containing: "did not accept you")
        #expect(told == "bob did not accept you into the chat (this chat lets no stranger in)", "\(told)")
        try carol.waitForEvent("disconnected", peer: "bob")
        _ = try bob.terminate()
    }
}

extension IntegrationTests.ChatAskTests {
    /// Review M3: a stranger whose request ends while its question is on the screen takes the question along;
    /// before, the question stayed and blocked the ones behind it.
    @Test func aStrangerThatGivesUpWhileAskedAboutTakesItsQuestionAlong() throws {
        let harness = try ChatHarness()
        let bob = try IntegrationTests.ChatTerminalTests.pane(harness, "bob", accept: nil, ["--mode", "server"])
        defer { bob.close() }
        let carol = try Self.carol(harness, [])  // carol dials bob (a server): its request waits for bob's answer
        try bob.waitFor("? Let carol in?")
        _ = try carol.terminate()
        let screen = try bob.waitFor("* carol left before you answered")
        #expect(!screen.contains("* carol joined"), "\(screen)")
    }
}

extension IntegrationTests.ChatAskTests {
    /// Review M2: a peer this chat refused was blocked for the whole run, even once pinned with `ferry trust add` in
    /// another terminal (the chat did not follow the trusted-peers file). Now the pin is taken at once and the peer
    /// is dialled again and joins as trusted.
    @Test func aRefusedPeerPinnedInAnotherTerminalIsDialledAgainAndJoins() async throws {
        let harness = try ChatHarness()
        let carolID = try await harness.deviceID(of: "carol")
        let bob = try IntegrationTests.ChatTerminalTests.pane(harness, "bob", accept: nil)
        defer { bob.close() }
        let carol = try Self.carol(harness)
        try bob.waitFor("? Let carol in?")
        try Self.answer(bob, "n", about: "carol")
        try carol.waitForEvent("disconnected", peer: "bob")
        try await harness.trust(carolID, as: "carol", by: "bob")
        let screen = try bob.waitFor("* carol joined: trusted, key verified")
        // Joined as pinned, without another question (one "no", no "you let carol in").
        #expect(IntegrationTests.InteractiveReceiveTests.count("* you did not let carol in", in: screen) == 1)
        #expect(!screen.contains("* you let carol in"), "\(screen)")
    }
}

extension IntegrationTests.ChatAskTests {
    /// Review H2: the chat dialled every peer it discovered whatever `--max-peers` said (each dialled stranger is a
    /// question with held lines). With `--max-peers 1` and two peers to reach, it dials one.
    @Test func aChatDialsNoMorePeersThanMaxPeersAllows() throws {
        let harness = try ChatHarness()
        let (bob, _) = try harness.chat("bob", ["--accept", "all", "--max-peers", "1"])
        _ = try harness.chat("carol", ["--mode", "server", "--accept", "all"])
        _ = try harness.chat("dave", ["--mode", "server", "--accept", "all"])
        var available: Set<String> = []
        var connected = false
        while available.count < 2 || !connected {
            let object = try bob.nextJSON(timeout: .seconds(60))
            let name = (object["peer"] as? [String: Any])?["name"] as? String ?? ""
            switch object["event"] as? String {
            case "available": available.insert(name)
            case "connected": connected = true
            default: break
            }
        }
        try bob.send(line: "/peers")
        var states: [String] = []
        while states.count < 2 {
            let row = try bob.nextJSON(timeout: .seconds(60)) { $0["event"] as? String == "peerInfo" }
            states.append((row["peer"] as? [String: Any])?["state"] as? String ?? "")
        }
        #expect(states.filter { $0 == "connected" || $0 == "connecting" }.count == 1, "\(states)")
    }
}

extension IntegrationTests.ChatAskTests {
    /// Review, low: a refusal by the other side was reported twice on the screen of the side that dialled (`* bob
    /// did not accept you into the chat`, then `* bob is here (peer bob denied the connection: ...)`).
    @Test func aRefusalByTheOtherSideIsReportedOnce() throws {
        let harness = try ChatHarness()
        let bob = try IntegrationTests.ChatTerminalTests.pane(harness, "bob", accept: nil, ["--mode", "server"])
        defer { bob.close() }
        let alice = try IntegrationTests.ChatTerminalTests.pane(harness, "alice", accept: nil)
        defer { alice.close() }
        try bob.waitFor("? Let alice in?")
        try Self.answer(bob, "n", about: "alice")
        try alice.waitFor("* bob did not accept you into the chat")
        try alice.type("/peers")
        let screen = try alice.waitFor("NAME")
        #expect(!screen.contains("denied the connection"), "\(screen)")
        // Not dialled again at once either (it was, before the back-off was taken from the state change).
        let told = IntegrationTests.InteractiveReceiveTests.count("* bob did not accept you into the chat", in: screen)
        #expect(told == 1, "\(screen)")
    }
}
