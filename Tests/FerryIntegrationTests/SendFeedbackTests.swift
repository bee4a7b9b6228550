import Foundation
import FerryTestSupport
import Testing

/// Issue 28, 4: what a sender reads: a failure once, a text as a message.
extension IntegrationTests {
    @Suite(.serialized) struct SendFeedbackTests {
        /// `ferry send` in text (no --json, stderr a pipe) as the install "outbox"; its status and stderr.
        static func textSend(_ harness: TransferHarness, _ arguments: [String]) async throws -> (Int32, String) {
            let process = try harness.chat.registry.startFerry(
                ["send"] + arguments + ["--session", harness.session, "--name", "outbox", "--interface", "lo"],
                environment: harness.chat.environment("outbox"))
            let (status, _, stderr) = try await process.finish(timeout: .seconds(120))
            return (status, stderr)
        }

        /// Issue 28, 4: `Error: could not connect to dave: X` then `nothing sent to dave: X` said it twice.
        @Test func aPeerThatCannotBeReachedIsReportedOnce() async throws {
            let harness = try TransferHarness()
            let file = try harness.files.random("once.bin", size: 100)
            // Nothing listens on port 1 of loopback: the connection is refused.
            let (status, stderr) = try await Self.textSend(harness, [file.path, "--to", "127.0.0.1:1"])
            #expect(status == 1, "\(stderr)")
            let lines = stderr.split(separator: "\n").map(String.init)
            #expect(lines.filter { $0.contains("refused") }.count == 1, "\(stderr)")
            #expect(lines.last?.hasPrefix("nothing sent") == true, "\(stderr)")
        }

        /// Issue 28, 4: a text and a file were "2 files", and the text "sent message.txt to inbox (21 B)".
        @Test func aTextIsReportedAsAMessageBesideTheFiles() async throws {
            let harness = try TransferHarness()
            let file = try harness.files.random("photo.bin", size: 3000)
            // The receiver in text too, without a terminal (a log): its line for the offer counts the text apart.
            let receiver = try harness.chat.registry.startFerry(
                [
                    "receive", "--into", harness.inbox.path, "--accept", "all", "--once", "--session",
                    harness.session, "--name", "inbox", "--port", "0", "--interface", "lo",
                ], environment: harness.chat.environment("inbox"))
            receiver.closeStdin()
            let listening = try receiver.waitForErrorLine { $0.hasPrefix("receiving into") }
            let digits = listening.components(separatedBy: "(port ").last?.prefix { $0.isNumber } ?? ""
            let port = try #require(Int(digits), "\(listening)")
            let (status, stderr) = try await Self.textSend(
                harness, [file.path, "--to", "127.0.0.1:\(port)", "--text", "the door code is 4711"])
            #expect(status == 0, "\(stderr)")
            #expect(stderr.contains("sent a message to inbox\n"), "\(stderr)")
            #expect(!stderr.contains("message.txt"), "\(stderr)")
            #expect(stderr.contains("sent 1 file and a message ("), "\(stderr)")
            #expect(try receiver.waitForExit(timeout: .seconds(60)) == 0)
            let log = try receiver.readAllStderr()
            #expect(log.contains("outbox offers 1 file and a message (3.0 KiB): accepted\n"), "\(log)")
            #expect(log.contains("message from outbox (kept as message.txt): the door code is 4711"), "\(log)")
        }
    }
}
