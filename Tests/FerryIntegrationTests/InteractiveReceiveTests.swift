import Foundation
import FerryTestSupport
import Testing

/// Issue 10, "the interactive receiver": `ferry receive --accept ask` on a real terminal (tmux, `TerminalPane`),
/// offered files by real headless `ferry send --json` processes. `a` pins the sender and its next offer is not
/// asked about; a pinned sender is never asked about; `n` denies at once; no answer within `--ask-timeout` denies;
/// offers past the prompt rate are denied without a prompt, and both sides say why.
extension IntegrationTests {
    @Suite(.serialized) struct InteractiveReceiveTests {
        /// The first line of the prompt's question for an unpinned sender.
        static let question = "Accept? [y]es, [n]o, [a]lways"

        /// `ferry receive --accept ask` (text) on a terminal, as the install "inbox"; returns once it listens.
        static func terminalReceiver(_ harness: TransferHarness, _ extra: [String] = []) throws
            -> (pane: TerminalPane, port: Int)
        {
            let pane = try TerminalPane(
                [
                    "receive", "--into", harness.inbox.path, "--accept", "ask", "--session", harness.session,
                    "--name", "inbox", "--port", "0", "--interface", "lo",
                ] + extra,
                environment: harness.chat.environment("inbox"), name: "receive")
            do {
                let screen = try pane.waitFor("Ctrl-C to stop")
                let line = screen.split(separator: "\n").first { $0.contains("receiving into") } ?? ""
                let port = Int(line.split(separator: "(port ").last?.prefix { $0.isNumber } ?? "")
                return (pane, try #require(port, "no port in: \(screen)"))
            } catch {
                pane.close()
                throw error
            }
        }

        /// How often `text` occurs in `screen`.
        static func count(_ text: String, in screen: String) -> Int {
            screen.components(separatedBy: text).count - 1
        }

        /// Polls the pane until `done` holds for its text (every 50 ms, at most `timeout`); returns the text then.
        @discardableResult
        static func waitUntil(
            _ pane: TerminalPane, timeout: Duration = .seconds(60), _ what: String, _ done: (String) -> Bool
        ) throws -> String {
            let deadline = ContinuousClock.now + timeout
            while true {
                let screen = try pane.text()
                if done(screen) { return screen }
                guard ContinuousClock.now < deadline else {
                    Issue.record("timed out waiting for \(what); the pane shows:\n\(screen)")
                    throw TerminalPaneError.timedOut(waitingFor: what, screen: screen)
                }
                Thread.sleep(forTimeInterval: 0.05)
            }
        }

        /// Types `key` as the answer to the prompt on screen, until the pane shows `echo` one more time than
        /// before. The prompt ignores an answer typed within 0.7 s of showing the offer (meant for the one before);
        /// such an answer is typed again, a quarter of a second later, until 60 s have passed.
        static func answer(_ pane: TerminalPane, _ key: String, echo: (String) -> Int) throws {
            let before = echo(try pane.text())
            let deadline = ContinuousClock.now + .seconds(60)
            while ContinuousClock.now < deadline {
                let ignored = count("(ignored an answer", in: try pane.text())
                try pane.type(key)
                let screen = try waitUntil(pane, "the answer '\(key)' to be taken") {
                    echo($0) > before || count("(ignored an answer", in: $0) > ignored
                }
                if echo(screen) > before { return }
                Thread.sleep(forTimeInterval: 0.25)
            }
            Issue.record("the answer '\(key)' was never taken: \(try pane.text())")
        }

        /// Lines of the pane that read exactly `line` (the prompt's echo of an answer: "denied", "accepted").
        static func lines(_ line: String) -> (String) -> Int {
            { screen in screen.split(separator: "\n").count { $0.trimmingCharacters(in: .whitespaces) == line } }
        }

        /// The `reason` of the sender's `denied` event.
        static func denialReason(_ lines: [String]) -> String? {
            lines.compactMap(TransferHarness.json).first { $0["event"] as? String == "denied" }?["reason"] as? String
        }

        @Test func answeringAlwaysPinsTheSenderAndItsNextOfferIsNotAsked() async throws {
            let harness = try TransferHarness()
            let first = try harness.files.random("first.bin", size: 3000)
            let second = try harness.files.random("second.bin", size: 4000)
            let senderID = try await PairingTests.groupedID(of: "outbox", in: harness)
            let (pane, port) = try Self.terminalReceiver(harness)
            defer { pane.close() }
            let sending = try harness.sender([first.path], to: [port])
            try pane.waitFor(Self.question)
            try Self.answer(pane, "a") { Self.count("is trusted from now on (ferry trust list)", in: $0) }
            let (status, lines, errors) = try await sending.finish(timeout: .seconds(120))
            #expect(status == 0, "\(lines) \(errors)")
            let list = try harness.chat.registry.startFerry(
                ["trust", "list", "--json"], environment: harness.chat.environment("inbox"))
            let (_, trusted, _) = try await list.finish(timeout: .seconds(60))
            #expect(trusted.contains { $0.contains(senderID) && $0.contains("\"outbox\"") }, "\(trusted)")
            // The next offer of the same sender (a new process, a new link) is accepted without a prompt.
            let again = try harness.send([second.path], to: [port])
            #expect(again.status == 0, "\(again.summary ?? [:])")
            let screen = try pane.text()
            #expect(Self.count(Self.question, in: screen) == 1, "\(screen)")
            #expect(Self.count("accepted, a trusted peer (key verified)", in: screen) == 1, "\(screen)")
            #expect(
                try TransferHarness.visibleFiles(in: harness.inbox.path) == ["first.bin": 3000, "second.bin": 4000])
        }

        @Test func aPinnedSenderIsAcceptedWithoutAPrompt() async throws {
            let harness = try TransferHarness()
            let file = try harness.files.random("pinned.bin", size: 3000)
            try await harness.chat.trust(try await harness.chat.deviceID(of: "outbox"), as: "outbox", by: "inbox")
            let (pane, port) = try Self.terminalReceiver(harness)
            defer { pane.close() }
            let result = try harness.send([file.path], to: [port])
            #expect(result.status == 0, "\(result.summary ?? [:])")
            let screen = try pane.waitFor("accepted, a trusted peer (key verified)")
            #expect(!screen.contains("Accept?"), "\(screen)")
            #expect(try TransferHarness.visibleFiles(in: harness.inbox.path) == ["pinned.bin": 3000])
        }

        /// With an ask timeout of an hour, only the answer can end the offer within the test's time limit.
        @Test func answeringNoDeniesAtOnceAndTheSenderIsToldSo() async throws {
            let harness = try TransferHarness()
            let file = try harness.files.random("no.bin", size: 3000)
            let (pane, port) = try Self.terminalReceiver(harness, ["--ask-timeout", "3600"])
            defer { pane.close() }
            let before = try DirectorySnapshot(of: URL(fileURLWithPath: harness.inbox.path))
            let sending = try harness.sender([file.path], to: [port])
            try pane.waitFor(Self.question)
            try Self.answer(pane, "n", echo: Self.lines("denied"))
            let (status, lines, errors) = try await sending.finish(timeout: .seconds(120))
            #expect(status == 1, "\(lines) \(errors)")
            let reason = Self.denialReason(lines) ?? ""
            #expect(reason.contains("denied by the user"), "\(lines) \(errors)")
            try pane.waitFor("refused a transfer from outbox")
            let after = try DirectorySnapshot(of: URL(fileURLWithPath: harness.inbox.path))
            #expect(after.added(since: before).isEmpty, "\(after)")
        }

        @Test func noAnswerWithinTheAskTimeoutDenies() async throws {
            let harness = try TransferHarness()
            let file = try harness.files.random("late.bin", size: 3000)
            let (pane, port) = try Self.terminalReceiver(harness, ["--ask-timeout", "2"])
            defer { pane.close() }
            let before = try DirectorySnapshot(of: URL(fileURLWithPath: harness.inbox.path))
            let sending = try harness.sender([file.path], to: [port])
            try pane.waitFor(Self.question)
            // The prompt says "no answer in time" or "the offer ... ended", whichever of its timer and the
            // engine's denial it hears first; the refusal line comes either way.
            let screen = try pane.waitFor("refused a transfer from outbox")
            #expect(screen.contains("nobody answered in time"), "\(screen)")
            let (status, lines, errors) = try await sending.finish(timeout: .seconds(120))
            #expect(status == 1, "\(lines) \(errors)")
            let reason = Self.denialReason(lines) ?? ""
            #expect(reason.contains("nobody answered in time"), "\(lines) \(errors)")
            let after = try DirectorySnapshot(of: URL(fileURLWithPath: harness.inbox.path))
            #expect(after.added(since: before).isEmpty, "\(after)")
        }

        /// The sender on a terminal: its connected line gives the code, and the question right after it asks
        /// whether the receiver shows it; the line does not also claim what the receiver shows.
        @Test func aSenderOnATerminalShowsTheCodeOnceThenAsks() async throws {
            let harness = try TransferHarness()
            let file = try harness.files.random("asked.bin", size: 1000)
            let (receiver, port) = try harness.receiver(accept: "all", once: false)
            let pane = try PairingTests.terminalSender(harness, [file.path], port: port)
            defer { pane.close() }
            let code = try PairingTests.receiverCode(receiver)
            let screen = try pane.waitFor("Does inbox show \(code)?")
            let lines = screen.split(separator: "\n").map(String.init)
            let question = try #require(lines.firstIndex { $0.hasPrefix("Does inbox show \(code)?") })
            #expect(question > 0 && lines[question - 1].hasSuffix("): connected, pairing code \(code)"), "\(screen)")
            #expect(!screen.contains("unless someone is in between"), "\(screen)")
            try pane.type("n")
            #expect(try pane.waitForExit().status == 1)
            _ = try receiver.terminate()
        }

        /// Six offers of one sender at once: the prompt rate (3 a minute per sender, a burst of 3) lets the first
        /// three are asked about; the others are denied without a prompt, unless a token came back meanwhile (one
        /// every 20 s), so at least one is. The ones asked about time out (`--ask-timeout 5`).
        @Test func offersBeyondThePromptRateAreDeniedWithoutAPromptAndBothSidesSayWhy() async throws {
            let harness = try TransferHarness()
            let (pane, port) = try Self.terminalReceiver(harness, ["--ask-timeout", "5"])
            defer { pane.close() }
            var senders: [FerryProcess] = []
            for index in 0..<6 {
                let file = try harness.files.random("rate\(index).bin", size: 1000 + index)
                senders.append(try harness.sender([file.path], to: [port]))
            }
            var asked = 0
            var limited = 0
            for sender in senders {
                let (status, lines, errors) = try await sender.finish(timeout: .seconds(180))
                #expect(status == 1, "\(lines) \(errors)")
                let reason = Self.denialReason(lines) ?? ""
                if reason.contains("too many offers") {
                    limited += 1
                } else {
                    #expect(reason.contains("nobody answered in time"), "\(lines) \(errors)")
                    asked += 1
                }
                #expect(!reason.contains("denied by the user"), "\(lines)")
            }
            #expect(limited >= 1 && asked >= 3 && asked + limited == 6, "asked \(asked), limited \(limited)")
            let screen = try Self.waitUntil(pane, "six refusal lines") {
                Self.count("refused a transfer from outbox", in: $0) == 6
            }
            // Offers asked about were shown one at a time (some may have expired while queued); none beyond.
            let prompts = Self.count(Self.question, in: screen)
            #expect(prompts >= 1 && prompts <= asked, "\(screen)")
            #expect(Self.count("denied without asking, too many offers", in: screen) == limited, "\(screen)")
            #expect(try TransferHarness.visibleFiles(in: harness.inbox.path).isEmpty)
        }
    }
}
