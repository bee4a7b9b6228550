import Foundation
import FerryTestSupport
import Glibc
import Testing

extension IntegrationTests {
    /// Issue 9, section 5, with real `ferry` processes on loopback: a source rewritten in place while it is sent, its
    /// modification time put back (`dd conv=notrunc`, then `touch -d`), is not published, and the sender says so
    /// and exits 1.
    @Suite(.serialized) struct SourceChangeProcessTests {
        @Test func aSourceRewrittenInPlaceMidSendIsNotPublishedAndTheSenderFails() throws {
            let harness = try TransferHarness()
            let file = try harness.files.random("video.bin", size: 32 << 20, seed: 3)
            let (receiver, port) = try harness.receiver()
            // Slowed from the start, then held once the transfer is under way: the sender reads at most its window
            // (8 MiB) ahead of what passed, so the last MiB is read only after the rewrite.
            let proxy = try FaultProxy(targetPort: UInt16(port), mode: .delay(.milliseconds(20)))
            defer { proxy.close() }
            let sender = try harness.sender([file.path], to: [Int(proxy.port)], ["--compress", "none"])
            _ = try receiver.nextJSON(timeout: .seconds(120), where: { $0["event"] as? String == "started" })
            proxy.mode = .stall

            var before = stat()
            try #require(stat(file.path, &before) == 0)
            try Self.run(
                "/bin/dd", "if=/dev/zero", "of=\(file.path)", "bs=1M", "seek=31", "count=1", "conv=notrunc",
                "status=none")
            let nanoseconds = String(before.st_mtim.tv_nsec)
            let time = "@\(before.st_mtim.tv_sec).\(String(repeating: "0", count: 9 - nanoseconds.count))\(nanoseconds)"
            try Self.run("/usr/bin/touch", "-d", time, file.path)
            var after = stat()
            try #require(stat(file.path, &after) == 0)
            try #require(
                after.st_mtim.tv_sec == before.st_mtim.tv_sec && after.st_mtim.tv_nsec == before.st_mtim.tv_nsec)
            try #require(after.st_size == before.st_size)
            proxy.mode = .pass

            #expect(try sender.waitForExit(timeout: .seconds(240)) == 1, "\(sender.capturedOutput())")
            let output = sender.allStdoutLines.joined(separator: "\n") + sender.allStderrLines.joined(separator: "\n")
            #expect(output.contains("changed while it was being sent"), "\(sender.capturedOutput())")
            #expect(output.contains("send it again when it is no longer being written"), "\(sender.capturedOutput())")
            _ = try? receiver.waitForExit(timeout: .seconds(60))
            _ = try? receiver.terminate()
            #expect(try TransferHarness.visibleFiles(in: harness.inbox.path).isEmpty, "nothing was published")
            let staged = try FileManager.default.contentsOfDirectory(atPath: harness.inbox.path + "/.ferry-staging")
            #expect(staged.isEmpty, "no staged data kept to resume from: \(staged)")
        }

        static func run(_ executable: String, _ arguments: String...) throws {
            let process = Process()
            process.executableURL = URL(fileURLWithPath: executable)
            process.arguments = arguments
            try process.runFenced()
            process.waitUntilExit()
            try #require(process.terminationStatus == 0, "\(executable) \(arguments)")
        }
    }
}
