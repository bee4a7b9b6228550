import FerryTestSupport
import Foundation

/// Row 6: what a person waits for a small file, the kept target of issue 11 (a 1 KiB file end to end, discovery by
/// name included, at most 50 ms).
///
/// Why its own row: rows 1-5 measure bytes; here nothing but the fixed costs counts (the `ferry` binary's start,
/// finding the peer by name, the TLS handshake, the offer and the publish with its sync). The receiver runs as a
/// service would (started once for the row, `receive --accept all` without `--once`), and each timed run is one
/// `ferry send FILE --to NAME` from its start until it exits, which it does once the receiver reported the file
/// published. The baselines pay the same fixed costs of their own: scp starts ssh and sshd per copy, nc starts two
/// processes.
extension CompareBenchmark {
    /// Sends per timed run; the run's figure is their median (a round is a few seconds, a lone send says little).
    static let latencySends = 5

    func rowSix() throws -> Row {
        let work = try scope.directory("ferry-compare-6")
        let source = try TestFiles(in: work).random("source/small.bin", size: 1024, seed: 6)
        let copies = work.url.appendingPathComponent("copies")
        try FileManager.default.createDirectory(at: copies, withIntermediateDirectories: true)
        let copy = copies.appendingPathComponent(source.lastPathComponent)
        let timeout = Duration.seconds(30)
        func checked(_ who: String, _ run: ContenderRun) throws -> ContenderRun {
            try verify(copy, matches: nil, of: source, who)
            try FileManager.default.removeItem(at: copy)
            return run
        }
        /// The median of `latencySends` runs of `body`, by elapsed time. Each run starts without a copy: one that a
        /// failed contender left behind would make the next contender's file land beside it under another name.
        func median(_ body: () throws -> ContenderRun) throws -> ContenderRun {
            let runs = try (0..<Self.latencySends).map { _ in
                try? FileManager.default.removeItem(at: copy)
                return try body()
            }.sorted { $0.elapsed < $1.elapsed }
            return runs[runs.count / 2]
        }
        let receiver = LatencyReceiver(scope: scope, home: work.url.appendingPathComponent("homes"), inbox: copies)
        let netcat = NetcatBaseline(scope: scope, timeout: timeout)
        let inetd = InetdRun(scope: scope, timeout: timeout)
        let (ssh, _) = try daemonBaselines(in: work.url, destination: copies)
        var row = Row(number: "6", title: "a 1 KiB file end to end, to a receiver already running", bytes: 1024)
        row.inMilliseconds = true
        row.contenders = [
            Contender("ferry send --to NAME (discovery included)", .ferry) {
                try median { try checked("ferry", receiver.send(source, byName: true, timeout: timeout)) }
            },
            Contender("ferry send --to HOST:PORT", .ferry) {
                try median { try checked("ferry", receiver.send(source, byName: false, timeout: timeout)) }
            },
            Contender("scp (aes128-gcm, into sshd -i)", .baseline, skipReason: SecureCopyBaseline.unavailable) {
                let ssh = try ssh.orThrow("scp")
                return try median {
                    try checked(
                        "scp",
                        inetd.run("scp", daemon: ssh.daemon, daemonStatuses: [0, 255]) {
                            ssh.client(port: $0, host: "127.0.0.1", sources: [source.path], destination: copy)
                        })
                }
            },
            Contender("nc > file", .baseline) {
                try median { try checked("nc", netcat.copyFile(source, to: copy)) }
            },
        ]
        row.notes = { _ in
            [
                "each figure: the median of \(Self.latencySends) sends per round, then the median of the rounds;",
                "ferry: from `ferry send`'s start until it exits (after the receiver published the file and synced it);",
                "the receiver (`receive --accept all`, no --once) runs through the whole row. CPU: milliseconds per send.",
            ]
        }
        row.targets = { results in
            let byName = CompareReport.result("ferry send --to NAME (discovery included)", in: results)
            return [
                TargetCheck(
                    text: "1 KiB end to end, discovery by name (kept)", value: byName?.medianMilliseconds, bound: 50,
                    atMost: true, unit: " ms")
            ]
        }
        return row
    }
}

/// A `ferry receive --accept all` started on the first send and kept for the row (`BenchScope` ends it), and the
/// sends to it: by its display name, or by its address.
final class LatencyReceiver {
    let scope: BenchScope
    let home: URL
    let inbox: URL
    let sessionID = "bench-\(UInt32.random(in: 0...UInt32.max))"
    let name = "bench-receiver-\(UInt16.random(in: 0...UInt16.max))"
    private var port: Int?
    private var process: FerryProcess?

    init(scope: BenchScope, home: URL, inbox: URL) {
        self.scope = scope
        self.home = home
        self.inbox = inbox
    }

    /// One `ferry send FILE --to NAME` (or `--to 127.0.0.1:PORT`), timed from its start until it exits.
    func send(_ file: URL, byName: Bool, timeout: Duration) throws -> ContenderRun {
        let port = try started()
        let binary = try FerryBinary.url.path
        let target = byName ? name : "127.0.0.1:\(port)"
        let clock = ContinuousClock()
        let start = clock.now
        let sender = try scope.start(
            binary, ["--session", sessionID, "--interface", "lo", "send", file.path, "--to", target, "--json"],
            environment: try FerryTransferRun.environment(home: home, "sender"))
        let status: Int32
        do {
            status = try sender.waitForExit(timeout: timeout)
        } catch {
            throw BenchFailure("ferry send failed: it did not finish within \(timeout)")
        }
        let elapsed = clock.now - start
        guard status == 0 else {
            throw BenchFailure(
                "ferry send failed: exit \(status)"
                    + sender.allStderrLines.suffix(4).map { "\n  stderr| \($0)" }.joined())
        }
        return ContenderRun(elapsed: elapsed, sender: sender.resourceUsage, receiver: nil)
    }

    /// The receiver's TCP port, starting it first if needed (and waiting for its `listening` event).
    private func started() throws -> Int {
        if let port, process?.isRunning == true { return port }
        let process = try scope.start(
            try FerryBinary.url.path,
            [
                "--session", sessionID, "--name", name, "--port", "0", "--interface", "lo", "receive", "--into",
                inbox.path, "--accept", "all", "--json",
            ], environment: try FerryTransferRun.environment(home: home, "receiver"))
        let listening: [String: Any]
        do {
            listening = try process.nextJSON(timeout: .seconds(30)) { $0["event"] as? String == "listening" }
        } catch {
            throw BenchFailure("ferry receive failed: no \"listening\" event")
        }
        guard let port = (listening["port"] as? NSNumber)?.intValue else {
            throw BenchFailure("ferry receive failed: no port in \(listening)")
        }
        self.process = process
        self.port = port
        return port
    }
}
