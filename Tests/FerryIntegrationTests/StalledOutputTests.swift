import Foundation
import FerryTestSupport
import Glibc
import Testing

/// A standard error that nobody reads: a FIFO whose read end the test holds open but does not read (until
/// `drain`), shrunk to one page, so that a few lines fill it, as a terminal after Ctrl-S or a stuck pipe would.
final class StalledOutput: Sendable {
    let path: String
    private let readEnd: Int32
    private let directory: TemporaryDirectory

    init() throws {
        directory = try TemporaryDirectory(prefix: "ferry-stall")
        path = directory.path + "/stderr"
        guard mkfifo(path, 0o600) == 0 else { throw TestSupportError.binaryNotFound(name: "mkfifo", searched: []) }
        readEnd = open(path, O_RDONLY | O_NONBLOCK | O_CLOEXEC)
        guard readEnd >= 0 else { throw TestSupportError.binaryNotFound(name: "open fifo", searched: []) }
        _ = fcntl(readEnd, 1031 /* F_SETPIPE_SZ */, Int32(4096))
    }

    deinit {
        close(readEnd)
        directory.remove()
    }

    /// Runs `ferry arguments` with its standard error on this FIFO.
    func startFerry(
        _ arguments: [String], environment: [String: String], registry: ProcessRegistry
    ) throws -> FerryProcess {
        try registry.start(
            executable: "/bin/sh",
            arguments: ["-c", "exec \"$0\" \"$@\" 2>\"$FERRY_STALLED_STDERR\"", try FerryBinary.url.path] + arguments,
            environment: environment.merging(["FERRY_STALLED_STDERR": path]) { $1 })
    }

    /// Reads everything until every writer closed its end (they exit), at most `timeout`.
    func drain(timeout: Duration = .seconds(120)) -> String {
        var data = Data()
        var buffer = [UInt8](repeating: 0, count: 65_536)
        let deadline = ContinuousClock.now + timeout
        var writerSeen = false
        while ContinuousClock.now < deadline {
            var poller = pollfd(fd: readEnd, events: Int16(POLLIN), revents: 0)
            _ = poll(&poller, 1, 200)
            let count = read(readEnd, &buffer, buffer.count)
            if count > 0 {
                writerSeen = true
                data.append(contentsOf: buffer[0..<count])
            } else if count == 0, writerSeen {
                break  // every writer has closed
            }
        }
        return String(decoding: data, as: UTF8.self)
    }
}

extension IntegrationTests {
    /// A terminal that stops reading stalls nothing but the output (issue 9, section 5).
    @Suite(.serialized) struct StalledOutputTests {
        @Test func aTransferCompletesWhileNobodyReadsTheStandardErrorOfEitherSideWithVerboseLogs() throws {
            let harness = try TransferHarness()
            let stalled = try StalledOutput()
            // 200 files: a "-v -v" line each on the receiver ("published ..."), many times the FIFO's 4 KiB.
            var files: [URL] = []
            for index in 0..<200 {
                files.append(try harness.files.random("a-file-with-a-longer-name-\(index).bin", size: 2000 + index))
            }
            let receiver = try stalled.startFerry(
                [
                    "-v", "-v", "receive", "--json", "--into", harness.inbox.path, "--accept", "all", "--once",
                    "--session", harness.session, "--name", "inbox", "--port", "0", "--interface", "lo",
                ], environment: harness.chat.environment("inbox"), registry: harness.chat.registry)
            let listening = try receiver.nextJSON { $0["event"] as? String == "listening" }
            let port = listening["port"] as? Int ?? 0
            let sender = try stalled.startFerry(
                ["-v", "-v", "send", "--json"] + files.map(\.path) + [
                    "--to", "127.0.0.1:\(port)", "--session", harness.session, "--name", "outbox", "--interface", "lo",
                ], environment: harness.chat.environment("outbox"), registry: harness.chat.registry)
            // The receiver's stdout (read by the harness) says when the transfer ended; stderr is still stuck.
            let finished = try receiver.nextJSON(timeout: .seconds(120)) { $0["event"] as? String == "finished" }
            #expect(finished["ok"] as? Bool == true && finished["filesSucceeded"] as? Int == files.count, "\(finished)")
            for file in files {
                let received = harness.inbox.path + "/" + file.lastPathComponent
                #expect(try TransferHarness.sha256(received) == TransferHarness.sha256(file.path))
            }
            // Now somebody reads: every line the two wrote comes out, and both exit (blocking at exit is fine).
            let text = stalled.drain()
            #expect(try receiver.waitForExit(timeout: .seconds(60)) == 0)
            #expect(try sender.waitForExit(timeout: .seconds(60)) == 0)
            let published = text.split(separator: "\n").filter { $0.contains("ferry: published ") }
            let dropped = text.contains("progress updates or log lines were dropped")
            #expect(published.count == files.count || dropped, "a verbose line was lost without a word")
        }
    }
}
