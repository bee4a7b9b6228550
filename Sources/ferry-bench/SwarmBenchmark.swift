import FerryTestSupport
import Foundation
import Glibc

/// `ferry-bench swarm` (issue 12): one sender broadcasts photos to 1, 4, 8 and 16 receivers, every host on a link of
/// its own limited to 100 Mbit/s both ways, all in one bed and one invocation; per broadcast the time against the
/// 1-receiver send and the copies the sender's link carried (its veth counters), and whether every receiver ended
/// with the same files.
///
/// Why namespaces and not loopback: on loopback nothing limits a link, so a sender's "copies" cost only CPU; the issue
/// is about the sender's link being the only one working. The receivers are started once and stay: each broadcast
/// is timed from the sender's start to its exit (ferry send exits when every receiver has published every file).
struct SwarmBenchmark: BenchRows {
    var options: SwarmOptions
    let scope = BenchScope.shared

    /// A `ferry receive --accept all` started once for the whole bench, on host `host`.
    struct Receiver {
        var host: TestHost
        var process: FerryProcess
        var port: Int
        var inbox: URL
    }

    /// How one broadcast runs: relaying (ferry's default, when it has relay) or direct (`--no-relay`, or a ferry
    /// without relay).
    struct Mode: Equatable {
        var name: String
        var sendArguments: [String]
    }

    /// Everything a broadcast needs, set up once.
    struct Setup {
        var ferry: String
        var bed: TestBed
        var receivers: [Receiver]
        var files: [URL]
        /// SHA-256 of each of `files`, in order.
        var digests: [String]
        var home: URL
        var sessionID: String
    }

    /// Builds the bed, writes the photos, starts the receivers, runs every broadcast and prints the figures; true
    /// when every broadcast finished with identical files everywhere (targets missed are not failures).
    func run() -> Bool {
        let signalSources = scope.cleanUpOnSignals()
        defer { withExtendedLifetime(signalSources) {} }
        defer { scope.cleanUp() }
        guard TestBed.isAvailable.available else {
            print("swarm: cannot run: network namespaces unavailable: \(TestBed.isAvailable.reason)")
            return false
        }
        let ferry: String
        do {
            ferry = try FerryBinary.url.path
        } catch {
            print("swarm: cannot run: \(error)")
            return false
        }
        let relay = Self.hasRelay(ferry)
        let modes = self.modes(relay: relay)
        header(ferry: ferry, relay: relay, modes: modes).forEach { print($0) }
        fflush(nil)
        var runs: [SwarmRun] = []
        var failure: String?
        do {
            let setup = try prepare(ferry: ferry)
            plan: for count in options.counts {
                for mode in modes {
                    let run = try broadcast(to: count, mode: mode, setup)
                    runs.append(run)
                    let one = runs.first { $0.receivers.count == 1 && $0.mode == mode }
                    SwarmReport.lines(run, against: one, options: options).forEach { print($0) }
                    fflush(nil)
                    if !run.problems.isEmpty { break plan }
                }
            }
        } catch {
            failure = "\(error)"
        }
        if let failure {
            print("")
            print("swarm: FAILED: \(failure)")
        }
        SwarmReport.summary(runs, modes: modes, options: options).forEach { print($0) }
        let ok = failure == nil && runs.allSatisfy(\.problems.isEmpty)
        print(ok ? "swarm: every broadcast measured" : "swarm: FAILED")
        return ok
    }

    /// Whether `ferry send` has `--no-relay` (and so relays by default).
    static func hasRelay(_ ferry: String) -> Bool {
        guard let help = try? FerryProcess.run(ferry, ["send", "--help"]) else { return false }
        return (help.stdout + help.stderr).contains("--no-relay")
    }

    /// The modes each count runs in, in order.
    func modes(relay: Bool) -> [Mode] {
        let direct = Mode(name: "direct", sendArguments: relay ? ["--no-relay"] : [])
        guard relay else { return [direct] }
        if options.noRelay { return [direct] }
        return options.baseline
            ? [direct, Mode(name: "relay", sendArguments: [])] : [Mode(name: "relay", sendArguments: [])]
    }

    private func header(ferry: String, relay: Bool, modes: [Mode]) -> [String] {
        let source = ProcessInfo.processInfo.environment["FERRY_BINARY"].map { _ in " (FERRY_BINARY)" } ?? ""
        var lines = [
            "ferry-bench swarm: \(options.mebibytes) MiB of photos from 1 sender to "
                + options.counts.map(String.init).joined(separator: ", ") + " receiver(s), every host's link "
                + "\(options.mbit) Mbit/s both ways (tc tbf on both veth ends)",
            "ferry: \(ferry)\(source); \(ProcessInfo.processInfo.activeProcessorCount) CPUs; "
                + "load average at the start: \(CompareBenchmark.loadAverage)",
        ]
        if relay {
            lines.append("relay: ferry send has --no-relay; modes: " + modes.map(\.name).joined(separator: ", "))
        } else {
            let asked = options.noRelay || options.baseline ? " (--no-relay/--baseline have nothing to switch)" : ""
            lines.append(
                "relay: not available in this ferry (ferry send --help has no --no-relay)\(asked): every broadcast "
                    + "sends directly, one copy per receiver over the sender's link")
        }
        lines += [
            "time: from ferry send's start to its exit (every receiver has published every file). copies: bytes the",
            "  sender's link carried out (veth counters: Ethernet, IP, TCP and TLS overhead included) / payload bytes.",
            "  MB = 10^6 bytes. CPU: user + system seconds (sender from wait4, receivers from /proc/PID/stat).",
        ]
        return lines
    }

    /// Photos, bed, links and receivers.
    private func prepare(ferry: String) throws -> Setup {
        let work = try scope.directory("ferry-bench-swarm")
        let (files, digests) = try photos(in: work)
        let hostCount = (options.counts.max() ?? 1) + 1
        progress("swarm", "\(hostCount) namespaces on one bridge, \(options.mbit) Mbit/s both ways on every link")
        let bed = try scope.bed(hosts: hostCount, name: "swarm")
        try bed.limitEveryLink(
            mbit: options.mbit, burstKiB: max(64, options.mbit * 64 / 100), latency: .milliseconds(100))
        let home = work.url.appendingPathComponent("homes")
        let sessionID = "swarm-\(UInt32.random(in: 0...UInt32.max))"
        progress("swarm", "starting \(hostCount - 1) receivers (ferry receive --accept all)")
        var receivers: [Receiver] = []
        for host in bed.hosts.dropFirst() {
            let inbox = work.url.appendingPathComponent("inbox-\(host.index)")
            try FileManager.default.createDirectory(at: inbox, withIntermediateDirectories: true)
            let process = try scope.start(
                ferry,
                [
                    "--session", sessionID, "--port", "0", "--interface", host.interface, "receive", "--into",
                    inbox.path, "--accept", "all", "--json",
                ], environment: try Self.environment(home, "receiver-\(host.index)"), namespace: host.namespace)
            let listening: [String: Any]
            do {
                listening = try process.nextJSON(timeout: .seconds(60)) { $0["event"] as? String == "listening" }
            } catch {
                throw BenchFailure("ferry receive on \(host) did not start: \(process.capturedOutput())")
            }
            guard let port = (listening["port"] as? NSNumber)?.intValue, (1...65_535).contains(port) else {
                throw BenchFailure("ferry receive on \(host): no port in \(listening)")
            }
            receivers.append(Receiver(host: host, process: process, port: port, inbox: inbox))
        }
        return Setup(
            ferry: ferry, bed: bed, receivers: receivers, files: files, digests: digests, home: home,
            sessionID: sessionID)
    }

    /// `options.mebibytes` MiB of photos of 1-8 MiB each (the last one takes the rest), and their digests.
    private func photos(in work: TemporaryDirectory) throws -> ([URL], [String]) {
        progress("swarm", "writing \(options.mebibytes) MiB of photos")
        let files = TestFiles(in: work)
        var generator = SplitMix64(seed: 12)
        var remaining = options.bytes
        var urls: [URL] = []
        while remaining > 0 {
            var size = (1 << 20) + generator.below(7 << 20)
            if remaining - size < 1 << 20 { size = remaining }
            let name = String(format: "photos/IMG_%04d.jpg", urls.count + 1)
            urls.append(try files.photo(name, size: size, seed: 100 + UInt64(urls.count)))
            remaining -= size
        }
        let digests = try Self.digests(of: urls)
        return (urls, urls.map { digests[$0.lastPathComponent] ?? "" })
    }

    /// SHA-256 of `files` by name, from one `sha256sum`.
    static func digests(of files: [URL]) throws -> [String: String] {
        guard !files.isEmpty else { return [:] }
        let result = try FerryProcess.run("sha256sum", ["--"] + files.map(\.path), timeout: .seconds(600))
            .requireSuccess()
        var digests: [String: String] = [:]
        for line in result.stdout.split(separator: "\n") {
            let parts = line.split(separator: " ", maxSplits: 1)
            guard parts.count == 2 else { continue }
            let path = parts[1].hasPrefix("*") ? parts[1].dropFirst() : parts[1].drop { $0 == " " }
            digests[URL(fileURLWithPath: String(path)).lastPathComponent] = String(parts[0])
        }
        return digests
    }

    /// A home of its own for each ferry process: identity, trust store and state never mix.
    static func environment(_ home: URL, _ name: String) throws -> [String: String] {
        let root = home.appendingPathComponent(name).path
        try FileManager.default.createDirectory(atPath: root, withIntermediateDirectories: true)
        return [
            "HOME": root, "XDG_CONFIG_HOME": root + "/config", "XDG_DATA_HOME": root + "/data",
            "XDG_STATE_HOME": root + "/state", "XDG_CACHE_HOME": root + "/cache",
        ]
    }
}
