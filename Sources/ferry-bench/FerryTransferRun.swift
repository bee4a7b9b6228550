import FerryTestSupport
import Foundation

/// One transfer by the real `ferry` binary as the bench runs it: receivers first (each waits for
/// `"event":"listening"`), then a sender, timed from the sender's start until the last receiver exits.
///
/// Why these exact commands: the CLI's interface is fixed (see the brief of `ferry-bench transfer`):
///
///     ferry --session S --port 0 --interface IF receive --into DIR --accept all --once --json
///     ferry --session S --interface IF send FILE... (--to HOST:PORT | --all --wait 10) --compress MODE --json
///
/// Every wait has a deadline, so a missing or broken CLI fails the row with "ferry send failed: ..." or
/// "ferry receive failed: ..." instead of hanging the bench.
struct FerryTransferRun {
    /// Where a receiver runs and what it writes into.
    struct Receiver {
        var directory: URL
        var namespace: String?
        var interface = "lo"
        /// The address the sender uses for `--to`.
        var host = "127.0.0.1"
    }

    /// What the bench learned from a finished transfer.
    struct Result {
        var elapsed: Duration
        var sender: ResourceUsage?
        var receivers: [ResourceUsage?]
        /// The highest `VmHWM` read from /proc while each process ran (sampled at least every 50 ms): unlike wait4's
        /// `ru_maxrss`, it is the process's own peak (a `posix_spawn`ed child's `ru_maxrss` includes the bench's peak
        /// from before its exec). Nil when no sample was taken.
        var senderHighWater: Int?
        var receiverHighWaters: [Int?] = []
    }

    var scope: BenchScope
    var home: URL
    var files: [URL]
    var receivers: [Receiver]
    /// `--all --wait 10` instead of `--to HOST:PORT` (broadcast to every receiver of the session).
    var broadcast = false
    var compress = "auto"
    /// More options for `ferry send` (`--rehash`).
    var sendOptions: [String] = []
    var senderNamespace: String?
    var senderInterface = "lo"
    var timeout: Duration

    func run() throws -> Result {
        let binary: String
        do {
            binary = try FerryBinary.url.path
        } catch {
            throw BenchFailure("ferry send failed: \(error)")
        }
        let sessionID = "bench-\(UInt32.random(in: 0...UInt32.max))"
        var started: [(process: FerryProcess, port: Int)] = []
        for (index, receiver) in receivers.enumerated() {
            let process = try scope.start(
                binary,
                [
                    "--session", sessionID, "--port", "0", "--interface", receiver.interface, "receive", "--into",
                    receiver.directory.path, "--accept", "all", "--once", "--json",
                ], environment: try Self.environment(home: home, "receiver-\(index)"), namespace: receiver.namespace)
            let listening: [String: Any]
            do {
                listening = try process.nextJSON(timeout: .seconds(30)) { $0["event"] as? String == "listening" }
            } catch {
                throw failure("ferry receive failed", process, detail: "no \"listening\" event")
            }
            guard let port = (listening["port"] as? NSNumber)?.intValue, (1...65_535).contains(port) else {
                throw failure("ferry receive failed", process, detail: "no port in \(listening)")
            }
            started.append((process, port))
        }
        // Every receiver by address: one broadcast transfer when there are several, without depending on how fast
        // discovery answers (`--all` takes the peers it found until none is new for `SendCommand.allQuietPeriod`).
        let target = zip(receivers, started).flatMap { receiver, started in
            ["--to", "\(receiver.host):\(started.port)"]
        }
        let clock = ContinuousClock()
        let start = clock.now
        let sender = try scope.start(
            binary,
            ["--session", sessionID, "--interface", senderInterface, "send"] + files.map(\.path) + target
                + ["--compress", compress, "--json"] + sendOptions,
            environment: try Self.environment(home: home, "sender"), namespace: senderNamespace)
        var waiting = started.map(\.process)
        var end = start
        let watched = [sender] + started.map(\.process)
        var highWaters = [Int?](repeating: nil, count: watched.count)
        while let next = waiting.first {
            for (index, process) in watched.enumerated() where process.isRunning {
                if let bytes = Self.highWater(of: process.pid) {
                    highWaters[index] = max(highWaters[index] ?? 0, bytes)
                }
            }
            if let status = sender.exitStatus, status != 0 { throw failure("ferry send failed", sender) }
            if let status = next.exitStatus {
                guard status == 0 else { throw failure("ferry receive failed", next) }
                end = clock.now
                waiting.removeFirst()
                continue
            }
            guard clock.now - start < timeout else {
                throw failure(
                    "ferry send failed", sender,
                    detail: "the transfer did not finish within \(timeout); receiver: \(next.capturedOutput())")
            }
            _ = try? next.waitForExit(timeout: .milliseconds(50))
        }
        let elapsed = end - start
        let status = try? sender.waitForExit(timeout: .seconds(60))
        guard status == 0 else { throw failure("ferry send failed", sender) }
        guard let summary = sender.allStdoutLines.last(where: { $0.hasPrefix("{") }),
            summary.contains("\"summary\"")
        else {
            throw failure("ferry send failed", sender, detail: "the last JSON line is not {\"event\":\"summary\",...}")
        }
        return Result(
            elapsed: elapsed, sender: sender.resourceUsage, receivers: started.map(\.process.resourceUsage),
            senderHighWater: highWaters[0], receiverHighWaters: Array(highWaters.dropFirst()))
    }

    /// `VmHWM` of /proc/PID/status in bytes, or nil (the process is gone or a zombie).
    static func highWater(of pid: Int32) -> Int? {
        guard let status = try? String(contentsOfFile: "/proc/\(pid)/status", encoding: .utf8),
            let line = status.split(separator: "\n").first(where: { $0.hasPrefix("VmHWM:") }),
            let kib = Int(line.split(separator: " ").dropFirst().first ?? "")
        else { return nil }
        return kib * 1024
    }

    /// A home of its own for each ferry process: identity, trust store and state never mix.
    static func environment(home: URL, _ name: String) throws -> [String: String] {
        let root = home.appendingPathComponent(name).path
        try FileManager.default.createDirectory(atPath: root, withIntermediateDirectories: true)
        return [
            "HOME": root, "XDG_CONFIG_HOME": root + "/config", "XDG_DATA_HOME": root + "/data",
            "XDG_STATE_HOME": root + "/state", "XDG_CACHE_HOME": root + "/cache",
        ]
    }

    /// "ferry send failed: exit 64: <last stderr lines>" (or "still running" and `detail`).
    private func failure(_ what: String, _ process: FerryProcess, detail: String? = nil) -> BenchFailure {
        _ = try? process.waitForExit(timeout: .seconds(2))  // so the message can show how it ended
        let status = process.exitStatus.map { "exit \($0)" } ?? "still running"
        var message = "\(what): \(status)"
        if let detail { message += "; \(detail)" }
        message += process.allStderrLines.suffix(4).map { "\n  stderr| \($0)" }.joined()
        message += process.allStdoutLines.suffix(2).map { "\n  stdout| \($0)" }.joined()
        return BenchFailure(message)
    }
}
