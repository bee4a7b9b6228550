import FerryTestSupport
import Foundation
import Testing

/// `ferry` raises its soft limit on open descriptors to the hard one (at most 65536) when it starts: a receiver of
/// many peers' small files would otherwise run out at the usual 1024 (ProcessLimits.raiseOpenFileLimit).
@Suite(.timeLimit(.minutes(2))) struct OpenFileLimitTests {
    @Test func aReceiverStartedWithALowSoftLimitRaisesIt() throws {
        let harness = try TransferHarness()
        let prlimit = "/usr/bin/prlimit"  // util-linux, essential in Debian
        try #require(FileManager.default.isExecutableFile(atPath: prlimit), "needs prlimit (util-linux)")
        // The soft limit 256 for the process prlimit then becomes (it execs ferry: the same PID).
        let receiver = try harness.chat.registry.start(
            executable: prlimit,
            arguments: [
                "--nofile=256:", try FerryBinary.url.path, "receive", "--json", "--into", harness.inbox.path,
                "--accept", "all", "--once", "--session", harness.session, "--port", "0", "--interface", "lo",
            ], environment: harness.chat.environment("inbox"))
        _ = try receiver.nextJSON { $0["event"] as? String == "listening" }
        let limits = try String(contentsOfFile: "/proc/\(receiver.pid)/limits", encoding: .utf8)
        let line = try #require(limits.split(separator: "\n").first { $0.hasPrefix("Max open files") })
        let fields = line.split(separator: " ").dropFirst(3)
        let soft = try #require(UInt64(fields.first ?? ""), "\(line)")
        let hard = try #require(UInt64(fields.dropFirst().first ?? ""), "\(line)")
        #expect(soft == min(hard, 65_536), "\(line)")
        #expect(soft > 256 || hard <= 256, "\(line)")
    }
}
