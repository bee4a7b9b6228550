import FerryTestSupport
import Foundation
import Testing

extension IntegrationTests {
    /// A file the receiver already holds, sent again by real `ferry send` / `ferry receive` processes.
    @Suite(.serialized) struct TransferLandingTests {
        /// The same bytes under the same name: no "name (1)", exit 0, and both sides say "already there (identical)".
        @Test func sendingAFileTheReceiverHoldsByteForByteAddsNoCopy() throws {
            let harness = try TransferHarness()
            let file = try harness.files.random("photo.jpg", size: 300_000, seed: 7)
            try FileManager.default.copyItem(atPath: file.path, toPath: harness.inbox.path + "/photo.jpg")
            let (receiver, port) = try harness.receiver()
            let sender = try harness.sender([file.path], to: [port])
            #expect(try sender.waitForExit(timeout: .seconds(120)) == 0, "\(sender.capturedOutput())")
            #expect(try receiver.waitForExit(timeout: .seconds(60)) == 0, "\(receiver.capturedOutput())")
            #expect(try TransferHarness.visibleFiles(in: harness.inbox.path) == ["photo.jpg": 300_000])
            #expect(try TransferHarness.sha256(harness.inbox.path + "/photo.jpg") == TransferHarness.sha256(file.path))

            let sent = sender.allStdoutLines.compactMap(TransferHarness.json)
            let fileEvent = try #require(sent.last { $0["event"] as? String == "file" }, "\(sent)")
            #expect(fileEvent["ok"] as? Bool == true && fileEvent["alreadyThere"] as? Bool == true, "\(fileEvent)")
            #expect(fileEvent["publishedName"] as? String == "photo.jpg")
            let summary = try #require(sent.last { $0["event"] as? String == "summary" })
            let peers = summary["peers"] as? [[String: Any]] ?? []
            #expect(summary["ok"] as? Bool == true && peers.first?["filesAlreadyThere"] as? Int == 1, "\(summary)")
            let received = receiver.allStdoutLines.compactMap(TransferHarness.json)
            #expect(received.contains { $0["event"] as? String == "file" && $0["alreadyThere"] as? Bool == true })
            let staged = try FileManager.default.contentsOfDirectory(atPath: harness.inbox.path + "/.ferry-staging")
            #expect(staged.isEmpty, "\(staged)")
        }

        /// The text form says it in words, on the sender's summary and the receiver's line.
        @Test func theTextSaysAlreadyThereIdentical() throws {
            let harness = try TransferHarness()
            let file = try harness.files.text("notes.txt", size: 5000)
            try FileManager.default.copyItem(atPath: file.path, toPath: harness.inbox.path + "/notes.txt")
            let (receiver, port) = try harness.receiver()
            let sender = try harness.chat.registry.startFerry(
                [
                    "send", file.path, "--to", "127.0.0.1:\(port)", "--session", harness.session, "--name", "outbox",
                    "--interface", "lo",
                ],
                environment: harness.chat.environment("outbox"))
            #expect(try sender.waitForExit(timeout: .seconds(120)) == 0, "\(sender.capturedOutput())")
            #expect(try receiver.waitForExit(timeout: .seconds(60)) == 0)
            let text = (sender.allStderrLines + sender.allStdoutLines).joined(separator: "\n")
            #expect(text.contains("notes.txt: already there at inbox (identical, "), "\(text)")
            #expect(text.contains("1 file already there, identical"), "\(text)")
            #expect(try TransferHarness.visibleFiles(in: harness.inbox.path) == ["notes.txt": 5000])
        }

        /// Other bytes of the same size under the same name: kept beside the first as "name (1)", the first untouched.
        @Test func aDifferentFileOfTheSameNameAndSizeIsKeptBesideTheFirst() throws {
            let harness = try TransferHarness()
            let file = try harness.files.random("photo.jpg", size: 300_000, seed: 7)
            let mine = TestFiles.randomBytes(count: 300_000, seed: 8)
            try Data(mine).write(to: URL(fileURLWithPath: harness.inbox.path + "/photo.jpg"))
            let (receiver, port) = try harness.receiver()
            let sender = try harness.sender([file.path], to: [port])
            #expect(try sender.waitForExit(timeout: .seconds(120)) == 0, "\(sender.capturedOutput())")
            #expect(try receiver.waitForExit(timeout: .seconds(60)) == 0)
            #expect(
                try TransferHarness.visibleFiles(in: harness.inbox.path) == [
                    "photo.jpg": 300_000, "photo (1).jpg": 300_000,
                ])
            let kept = try Data(contentsOf: URL(fileURLWithPath: harness.inbox.path + "/photo.jpg"))
            #expect([UInt8](kept) == mine, "the first file is never replaced")
            #expect(
                try TransferHarness.sha256(harness.inbox.path + "/photo (1).jpg") == TransferHarness.sha256(file.path))
            let fileEvent = sender.allStdoutLines.compactMap(TransferHarness.json).last {
                $0["event"] as? String == "file"
            }
            #expect(
                fileEvent?["alreadyThere"] as? Bool == false
                    && fileEvent?["publishedName"] as? String == "photo (1).jpg")
        }
    }
}
