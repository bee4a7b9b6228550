import Foundation
import FerryTestSupport
import Testing

/// `ferry send --text` between two real processes on loopback: the receiver prints the text with the sender's
/// name, escaped; keeps it as a file only when started with --into; a text over 64 KiB is refused before anything
/// is sent (PROTOCOL.md 11.3, `text/x-ferry-message`).
@Suite(.serialized, .timeLimit(.minutes(5))) struct TextMessageTests {
    /// A hostile text: a screen clear, a carriage return that would overwrite the line, a forged second line, a
    /// bidi override, a bell.
    static let hostile = "hi \u{1B}[2J\rforged\u{202E}txt\u{07}\nreceived evil.sh from mallory (1 B)"

    /// `ferry receive --accept all --once` with no --into: it receives into the default download directory
    /// (`$HOME/Downloads`, `HOME` a temporary directory). Returns the process and its port, read from its first line.
    static func receiverWithoutInto(_ harness: TransferHarness, home: String, json: Bool) throws
        -> (process: FerryProcess, port: Int)
    {
        var environment = harness.chat.environment("inbox")
        environment["HOME"] = home
        let process = try harness.chat.registry.startFerry(
            [
                "receive", "--accept", "all", "--once", "--session", harness.session, "--name", "inbox", "--port", "0",
                "--interface", "lo",
            ] + (json ? ["--json"] : []),
            environment: environment)
        if json {
            let listening = try process.nextJSON { $0["event"] as? String == "listening" }
            return (process, listening["port"] as? Int ?? 0)
        }
        let line = try process.waitForErrorLine { $0.hasPrefix("receiving into") }
        let port = line.split(separator: "(port ").last.flatMap { Int($0.prefix { $0.isNumber }) } ?? 0
        return (process, port)
    }

    @Test func aTextIsPrintedEscapedWithTheSendersNameAndNotKeptWithoutInto() async throws {
        let harness = try TransferHarness()
        let home = try TemporaryDirectory(prefix: "ferry-home")
        defer { home.remove() }
        let (receiver, port) = try Self.receiverWithoutInto(harness, home: home.path, json: false)
        let sent = try harness.send([], to: [port], ["--text", Self.hostile])
        #expect(sent.status == 0, "\(sent)")
        #expect(try receiver.waitForExit(timeout: .seconds(60)) == 0, "\(receiver.capturedOutput())")
        let lines = receiver.allStderrLines
        let expected = [
            "message from outbox:",
            "  hi \\u{1B}[2J\\u{D}forged\\u{202E}txt\\u{7}",
            "  received evil.sh from mallory (1 B)",
        ]
        let start = try #require(lines.firstIndex(of: expected[0]), "\(lines)")
        #expect(Array(lines[start..<min(start + 3, lines.count)]) == expected, "\(lines)")
        #expect(!lines.contains { $0.unicodeScalars.contains { $0.value == 0x1B || $0.value == 0x0D } })
        // Not kept: nothing in the download directory, nothing left staged.
        let downloads = home.path + "/Downloads"
        #expect(try TransferHarness.visibleFiles(in: downloads).isEmpty)
        #expect(((try? FileManager.default.contentsOfDirectory(atPath: downloads + "/.ferry-staging")) ?? []).isEmpty)
    }

    @Test func theJSONEventCarriesTheTextAndSaysItWasNotKept() async throws {
        let harness = try TransferHarness()
        let home = try TemporaryDirectory(prefix: "ferry-home")
        defer { home.remove() }
        let (receiver, port) = try Self.receiverWithoutInto(harness, home: home.path, json: true)
        let sent = try harness.send([], to: [port], ["--text", "héllo\u{1B}"])
        #expect(sent.status == 0, "\(sent)")
        let message = try receiver.nextJSON(timeout: .seconds(60)) { $0["event"] as? String == "message" }
        #expect(message["text"] as? String == "héllo\u{1B}")
        #expect(message["peer"] as? String == "outbox")
        #expect(message["bytes"] as? Int == 7)
        #expect(message["keptAs"] is NSNull)
        #expect(try receiver.waitForExit(timeout: .seconds(60)) == 0)
        #expect(try TransferHarness.visibleFiles(in: home.path + "/Downloads").isEmpty)
    }

    @Test func withIntoTheTextIsKeptAsAFileBesideTheFilesSentWithIt() async throws {
        let harness = try TransferHarness()
        let photo = try harness.files.random("photo.bin", size: 5000, seed: 7)
        let (receiver, port) = try harness.receiver()
        let sent = try harness.send([photo.path], to: [port], ["--text", "see the photo"])
        #expect(sent.status == 0, "\(sent)")
        let message = try receiver.nextJSON(timeout: .seconds(60)) { $0["event"] as? String == "message" }
        #expect(message["text"] as? String == "see the photo")
        #expect(message["keptAs"] as? String == "message.txt")
        #expect(try receiver.waitForExit(timeout: .seconds(60)) == 0)
        #expect(try TransferHarness.visibleFiles(in: harness.inbox.path) == ["message.txt": 13, "photo.bin": 5000])
        let kept = try String(contentsOfFile: harness.inbox.path + "/message.txt", encoding: .utf8)
        #expect(kept == "see the photo")
    }

    @Test func aTextOver64KiBIsRefusedBeforeAnythingIsSent() async throws {
        let harness = try TransferHarness()
        let (receiver, port) = try harness.receiver()
        let sender = try harness.sender([], to: [port], ["--text", String(repeating: "a", count: 65_537)])
        #expect(try sender.waitForExit(timeout: .seconds(60)) == 64)
        let error = sender.allStderrLines.first ?? ""
        let refusal =
            "Error: --text: the text is 65537 bytes, more than a message can carry (65536 bytes, 64 KiB); send it as a"
            + " file instead"
        #expect(error == refusal, "\(error)")
        // Nothing reached the receiver: it is still waiting for its first transfer.
        #expect(receiver.isRunning)
        #expect(try TransferHarness.visibleFiles(in: harness.inbox.path).isEmpty)
    }
}
