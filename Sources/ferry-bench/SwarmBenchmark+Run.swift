import FerryTestSupport
import Foundation
import Glibc

/// What one broadcast of `ferry-bench swarm` measured.
struct SwarmRun {
    var mode: SwarmBenchmark.Mode
    /// The hosts that received, in order.
    var receivers: [TestHost]
    var payloadBytes: Int
    var elapsed: Duration
    /// What crossed the sender's link, and each receiver's, during the broadcast.
    var sender: LinkCounters
    var receiverLinks: [LinkCounters]
    /// The sender's CPU (wait4); each receiver's CPU seconds during the broadcast (/proc/PID/stat).
    var senderUsage: ResourceUsage?
    var receiverSeconds: [Double?]
    /// Busy fraction of all the machine's CPUs during the broadcast (/proc/stat: every process, not only ferry's).
    var machineBusy: Double?
    /// Receivers whose files all matched the source's digests.
    var identical: Int
    /// What went wrong (missing or differing files, a failed send); empty when the broadcast is good.
    var problems: [String] = []

    /// Payload copies the sender's link carried out.
    var copies: Double { Double(sender.sentBytes) / Double(max(payloadBytes, 1)) }
}

extension SwarmBenchmark {
    /// One `ferry send` from host 0 to the first `count` receivers, timed, counted and checked.
    func broadcast(to count: Int, mode: Mode, _ setup: Setup) throws -> SwarmRun {
        let receivers = Array(setup.receivers.prefix(count))
        for receiver in receivers {
            guard receiver.process.isRunning else {
                throw BenchFailure("ferry receive on \(receiver.host) has exited: \(receiver.process.capturedOutput())")
            }
            for file in setup.files {
                try? FileManager.default.removeItem(at: receiver.inbox.appendingPathComponent(file.lastPathComponent))
            }
        }
        let sender = setup.bed.hosts[0]
        let targets = receivers.flatMap { ["--to", "\($0.host.address):\($0.port)"] }
        let bytes = try setup.files.reduce(0) { try $0 + fileSize($1) }
        // Generous: four times what the sender's link needs to carry a copy to each receiver, plus two minutes.
        let timeout = Duration.seconds(120 + 4 * count * bytes * 8 / (options.mbit * 1_000_000))
        progress("swarm", "\(mode.name): \(count) receiver(s)")
        let countersBefore = try setup.bed.linkCounters()
        let cpuBefore = receivers.map { Self.cpuSeconds(of: $0.process.pid) }
        let machineBefore = Self.machineTicks()
        let clock = ContinuousClock()
        let start = clock.now
        let process = try scope.start(
            setup.ferry,
            ["--session", setup.sessionID, "--interface", sender.interface, "send"] + setup.files.map(\.path)
                + targets + ["--wait", "60", "--json"] + mode.sendArguments,
            environment: try Self.environment(setup.home, "sender"), namespace: sender.namespace)
        let status: Int32
        do {
            status = try process.waitForExit(timeout: timeout)
        } catch {
            _ = try? process.terminate(grace: .seconds(5))
            throw BenchFailure("ferry send to \(count) receiver(s) did not finish within \(timeout)")
        }
        let elapsed = clock.now - start
        let machineAfter = Self.machineTicks()
        let cpuAfter = receivers.map { Self.cpuSeconds(of: $0.process.pid) }
        let countersAfter = try setup.bed.linkCounters()
        func delta(_ host: TestHost) -> LinkCounters {
            guard let after = countersAfter[host], let before = countersBefore[host] else {
                return LinkCounters(sentBytes: 0, receivedBytes: 0, sentPackets: 0, receivedPackets: 0)
            }
            return after - before
        }
        var run = SwarmRun(
            mode: mode, receivers: receivers.map(\.host), payloadBytes: bytes, elapsed: elapsed, sender: delta(sender),
            receiverLinks: receivers.map { delta($0.host) }, senderUsage: process.resourceUsage,
            receiverSeconds: zip(cpuBefore, cpuAfter).map { before, after in
                guard let before, let after else { return nil }
                return after - before
            },
            machineBusy: Self.busyFraction(machineBefore, machineAfter), identical: 0)
        if status != 0 {
            let stderr = process.allStderrLines.suffix(4).map { "\n  stderr| \($0)" }.joined()
            run.problems.append("ferry send exited with status \(status)\(stderr)")
        }
        for receiver in receivers {
            let problems = try check(receiver, setup)
            if problems.isEmpty { run.identical += 1 }
            run.problems += problems
        }
        return run
    }

    /// What is wrong with `receiver`'s copies: a file missing, or different from the source (SHA-256).
    private func check(_ receiver: Receiver, _ setup: Setup) throws -> [String] {
        let copies = setup.files.map { receiver.inbox.appendingPathComponent($0.lastPathComponent) }
        let present = copies.filter { FileManager.default.fileExists(atPath: $0.path) }
        let digests = try Self.digests(of: present)
        var problems: [String] = []
        for (file, digest) in zip(setup.files, setup.digests) {
            let name = file.lastPathComponent
            guard let copied = digests[name] else {
                problems.append("\(receiver.host.namespace): \(name) is missing")
                continue
            }
            if copied != digest { problems.append("\(receiver.host.namespace): \(name) differs (sha256 \(copied))") }
        }
        return problems
    }

    /// User + system CPU seconds of a running process (/proc/PID/stat), or nil when it is gone.
    static func cpuSeconds(of pid: Int32) -> Double? {
        guard let stat = try? String(contentsOfFile: "/proc/\(pid)/stat", encoding: .utf8),
            let close = stat.lastIndex(of: ")")
        else { return nil }
        // After "pid (comm)": state is field 3; utime and stime are fields 14 and 15.
        let fields = stat[stat.index(after: close)...].split(separator: " ")
        guard fields.count > 12, let user = Double(fields[11]), let system = Double(fields[12]) else { return nil }
        return (user + system) / Double(sysconf(Int32(_SC_CLK_TCK)))
    }

    /// (busy, total) jiffies of all CPUs from /proc/stat's first line.
    static func machineTicks() -> (busy: Double, total: Double)? {
        guard let stat = try? String(contentsOfFile: "/proc/stat", encoding: .utf8),
            let line = stat.split(separator: "\n").first, line.hasPrefix("cpu ")
        else { return nil }
        let values = line.split(separator: " ").dropFirst().compactMap { Double($0) }
        guard values.count >= 5 else { return nil }
        // user nice system idle iowait irq softirq steal (guest time is already inside user).
        let total = values.prefix(8).reduce(0, +)
        return (total - values[3] - values[4], total)
    }

    static func busyFraction(_ before: (busy: Double, total: Double)?, _ after: (busy: Double, total: Double)?)
        -> Double?
    {
        guard let before, let after, after.total > before.total else { return nil }
        return (after.busy - before.busy) / (after.total - before.total)
    }
}
