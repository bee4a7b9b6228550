import Foundation
import FerryTestSupport
import Testing

/// Issue 28, 2: what a sender on a terminal sees while the receiver decides.
extension IntegrationTests {
    @Suite(.serialized) struct SendWaitingTests {
        /// Issue 28, 2: after `y` to the pairing code the sender's screen stayed blank until the receiver's person
        /// answered. Now a line says what it waits for and how long that may take, and goes once the answer came.
        @Test func theSenderSaysItWaitsForTheReceiverToAcceptUntilItAnswers() throws {
            let harness = try TransferHarness()
            let file = try harness.files.random("wait.bin", size: 1000)
            let receiver = try TerminalPane(
                [
                    "receive", "--into", harness.inbox.path, "--accept", "ask", "--session", harness.session,
                    "--name", "inbox", "--port", "0", "--interface", "lo",
                ],
                environment: harness.chat.environment("inbox"), name: "receiver")
            defer { receiver.close() }
            let listening = try receiver.waitFor("receiving into")
            let portText = listening.components(separatedBy: "(port ").last?.prefix { $0.isNumber } ?? ""
            let port = try #require(Int(portText), "\(listening)")
            let sender = try IntegrationTests.PairingTests.terminalSender(harness, [file.path], port: port)
            defer { sender.close() }
            try sender.waitFor("Does inbox show")
            try sender.type("y")
            try sender.waitFor("waiting for inbox to accept... (a person asked there has 60 s to answer")
            try Self.deny(on: receiver)
            let (status, text) = try sender.waitForExit()
            #expect(status == 1, "\(text)")
            #expect(text.contains("inbox denied the transfer"), "\(text)")
            #expect(!text.contains("waiting for inbox"), "the line goes once the answer came: \(text)")
        }

        /// Review: the note was cut by characters, and a CJK name takes two columns each: on a 120-column terminal
        /// the note of a 21-character name (121 columns) wrapped, and when it went, the redraw (one line up) left its
        /// first line on the screen. Cut by the columns it takes, it goes whole.
        @Test func theWaitingLineForAWideNameFitsTheTerminalAndGoesWhole() throws {
            let harness = try TransferHarness()
            let file = try harness.files.random("wait.bin", size: 1000)
            let name = String(repeating: "受信箱", count: 7)  // 21 characters, 63 bytes, 42 columns
            let receiver = try TerminalPane(
                [
                    "receive", "--into", harness.inbox.path, "--accept", "ask", "--session", harness.session,
                    "--name", name, "--port", "0", "--interface", "lo",
                ],
                environment: harness.chat.environment("inbox"), name: "receiver")
            defer { receiver.close() }
            let listening = try receiver.waitFor("receiving into")
            let portText = listening.components(separatedBy: "(port ").last?.prefix { $0.isNumber } ?? ""
            let port = try #require(Int(portText), "\(listening)")
            let sender = try TerminalPane(
                [
                    "send", file.path, "--to", "127.0.0.1:\(port)", "--session", harness.session, "--name", "outbox",
                    "--interface", "lo",
                ],
                environment: harness.chat.environment("outbox"), name: "send", columns: 120)
            defer { sender.close() }
            try sender.waitFor("Does \(name) show")
            try sender.type("y")
            try sender.waitFor("waiting for \(name) to accept...")
            try Self.deny(on: receiver)
            let (status, text) = try sender.waitForExit()
            #expect(status == 1, "\(text)")
            #expect(text.contains("\(name) denied the transfer"), "\(text)")
            #expect(!text.contains("waiting for"), "the line went whole: \(text)")
        }

        /// Answers `n` at the receiver's prompt (typed again while the prompt ignores an answer typed within 0.7 s of
        /// showing it) until it says `denied`.
        static func deny(on receiver: TerminalPane) throws {
            try receiver.waitFor("Accept?")
            // The prompt ignores an answer typed within 0.7 s of showing it: type again until it is taken.
            var ignored = 0
            while true {
                try receiver.type("n")
                let deadline = ContinuousClock.now + .seconds(60)
                var screen = try receiver.text()
                while !screen.contains("\ndenied"), screen.components(separatedBy: "(ignored").count - 1 == ignored {
                    #expect(ContinuousClock.now < deadline, "\(screen)")
                    guard ContinuousClock.now < deadline else { return }
                    Thread.sleep(forTimeInterval: 0.05)
                    screen = try receiver.text()
                }
                if screen.contains("\ndenied") { break }
                ignored += 1
            }
        }
    }
}
