import FerryTestSupport
import Foundation
import Synchronization

/// `ferry-bench stress`: many small sends over a slow namespace link, to count hangs (issue 9, section 5).
///
/// Not a timed test: it reports how many sends succeeded (every file's SHA-256 checked), failed, and hung (took
/// longer than `hangAfter`, far more than their size needs at the link's rate; killed and counted). Three receivers
/// run for the whole run in one namespace (`StressReceiver.Kind`: `--accept trusted`, `--accept ask` on a terminal
/// with the sender pinned, `--accept ask` on a terminal answered "y"); the sender's namespace sends through a token
/// bucket of `mbit`; a process spinning on the CPU runs beside them, killed by PID at the end. Each send carries 1 to
/// 3 files: a larger one (1-4 MiB, random), a small one, a text file.
struct StressBenchmark {
    var sends = 200
    var mbit = 40
    var parallel = 2
    var hangAfter = Duration.seconds(30)
    let scope = BenchScope.shared
    /// The shortest time between two sends answered by typing (under the prompt rate of 10 a minute).
    static let typedInterval = Duration.seconds(7)

    static let usage = """
        usage: ferry-bench stress [--sends N] [--mbit M] [--parallel P] [--hang-after S]
          N sends (default 200) from one namespace to three receivers in another over a tc tbf link of M Mbit/s
          (default 40), P at a time (default 2), with a CPU hog beside them. A send still running after S seconds
          (default 30) is killed and counted as a hang. FERRY_BINARY=PATH runs another ferry build.
        """

    init(arguments: [String]) throws {
        var index = 0
        while index < arguments.count {
            let value = index + 1 < arguments.count ? Int(arguments[index + 1]) : nil
            switch (arguments[index], value) {
            case ("--sends", let value?) where value > 0: sends = value
            case ("--mbit", let value?) where value > 0: mbit = value
            case ("--parallel", let value?) where value > 0: parallel = value
            case ("--hang-after", let value?) where value > 0: hangAfter = .seconds(value)
            default: throw BenchFailure("unknown or invalid option \(arguments[index])")
            }
            index += 2
        }
    }

    /// What happened to the sends.
    struct Counts: Sendable {
        var started = 0
        var succeeded = 0
        var failed = 0
        var hung = 0
        var perKind: [String: (ok: Int, failed: Int, hung: Int)] = [:]
        var durations: [Duration] = []
        var problems: [String] = []
    }

    func run() -> Bool {
        let signals = scope.cleanUpOnSignals()
        defer {
            scope.cleanUp()
            withExtendedLifetime(signals) {}
        }
        guard TestBed.isAvailable.available else {
            print("stress: network namespaces unavailable: \(TestBed.isAvailable.reason)")
            return false
        }
        do {
            return try measure()
        } catch {
            print("stress: \(error)")
            return false
        }
    }

    private func measure() throws -> Bool {
        let binary = try FerryBinary.url.path
        let work = try scope.directory("ferry-stress")
        let bed = try scope.bed(hosts: 2, name: "stress")
        let (senderHost, receiverHost) = (bed.hosts[0], bed.hosts[1])
        try bed.limitRate(host: senderHost, mbit: mbit, burstKiB: 64)
        let session = "stress-\(UInt32.random(in: 0...UInt32.max))"
        let senderEnvironment = try StressHome.environment(work.url.appendingPathComponent("sender"))
        let id = try FerryProcess.run(
            "/usr/bin/env", senderEnvironment.map { "\($0.key)=\($0.value)" }.sorted() + [binary, "id", "--json"])
        guard id.status == 0,
            let object = try JSONSerialization.jsonObject(with: Data(id.stdout.utf8)) as? [String: Any],
            let senderID = object["deviceID"] as? String
        else { throw BenchFailure("ferry id failed: \(id.stderr)") }
        let tmux = try StressTmux()
        defer { tmux.stop() }
        var receivers: [StressReceiver] = []
        defer { receivers.forEach { $0.stop() } }
        for kind in StressReceiver.Kind.allCases {
            receivers.append(
                try StressReceiver.start(
                    kind, binary: binary, session: session, host: receiverHost, home: work.url, senderID: senderID,
                    scope: scope, tmux: tmux))
        }
        let answerer = StressAnswerer(receiver: receivers[2])
        answerer.start()
        defer { answerer.stop() }
        let hog = try scope.start("/bin/sh", ["-c", "while :; do :; done"])
        defer {
            hog.kill()
            _ = try? hog.waitForExit(timeout: .seconds(5))
        }
        print(
            "stress: \(sends) sends, \(parallel) at a time, over \(mbit) Mbit/s to \(receivers.map(\.kind.rawValue)),"
                + " a CPU hog (pid \(hog.pid)) beside; a send over \(hangAfter) is a hang; binary \(binary)")
        let all = receivers
        let counts = Mutex(Counts())
        let next = Mutex(0)
        let lastTyped = Mutex(ContinuousClock.now - Self.typedInterval)
        let sources = work.url.appendingPathComponent("sources")
        DispatchQueue.concurrentPerform(iterations: parallel) { _ in
            while true {
                let index = next.withLock { value in
                    defer { value += 1 }
                    return value
                }
                guard index < sends else { return }
                // A person is asked at most 10 times a minute, 3 times per sender (the session's prompt rates):
                // every third send is typed for when one is due, from a sender of its own (a new identity), and
                // goes to the other two receivers otherwise.
                var receiver = all[index % all.count]
                var environment = senderEnvironment
                if receiver.kind == .askTyped {
                    let due = lastTyped.withLock { last in
                        guard ContinuousClock.now - last >= Self.typedInterval else { return false }
                        last = .now
                        return true
                    }
                    if due {
                        environment =
                            (try? StressHome.environment(work.url.appendingPathComponent("typed-\(index)")))
                            ?? senderEnvironment
                    } else {
                        receiver = all[index % 2]
                    }
                }
                let outcome = send(
                    index, to: receiver, binary: binary, session: session, host: senderHost,
                    receiverHost: receiverHost, environment: environment, sources: sources)
                counts.withLock { counts in
                    counts.started += 1
                    var kind = counts.perKind[receiver.kind.rawValue] ?? (0, 0, 0)
                    switch outcome {
                    case .success(let duration):
                        counts.succeeded += 1
                        kind.ok += 1
                        counts.durations.append(duration)
                    case .failure(let why):
                        counts.failed += 1
                        kind.failed += 1
                        if counts.problems.count < 8 { counts.problems.append("send \(index): \(why)") }
                    case .hang(let why):
                        counts.hung += 1
                        kind.hung += 1
                        counts.problems.append("send \(index) hung: \(why)")
                    }
                    counts.perKind[receiver.kind.rawValue] = kind
                    if counts.started % 20 == 0 {
                        print(
                            "stress: \(counts.started) sends: \(counts.succeeded) ok, \(counts.failed) failed, "
                                + "\(counts.hung) hung")
                    }
                }
            }
        }
        let result = counts.withLock { $0 }
        report(result, answered: answerer.answered.withLock { $0 })
        for receiver in receivers where receiver.process.map({ !$0.isRunning }) ?? false {
            print("stress: receiver \(receiver.kind.rawValue) exited early: \(receiver.lastErrorLines)")
        }
        return result.failed == 0 && result.hung == 0
    }

    enum Outcome {
        case success(Duration)
        case failure(String)
        case hang(String)
    }

    /// One send of 1-3 files (by `index`) to `receiver`, its files checked by SHA-256 and removed afterwards.
    private func send(
        _ index: Int, to receiver: StressReceiver, binary: String, session: String, host: TestHost,
        receiverHost: TestHost, environment: [String: String], sources: URL
    ) -> Outcome {
        do {
            let directory = sources.appendingPathComponent("s\(index)")
            let files = TestFiles(directory: directory)
            var urls = [try files.random("s\(index)-large.bin", size: (1 + index % 4) << 20, seed: UInt64(index + 1))]
            if index % 3 >= 1 { urls.append(try files.random("s\(index)-small.bin", size: 3000 + index, seed: 7)) }
            if index % 3 == 2 { urls.append(try files.text("s\(index)-notes.txt", size: 40_000, seed: 3)) }
            defer {
                try? FileManager.default.removeItem(at: directory)
                for url in urls {
                    try? FileManager.default.removeItem(
                        at: receiver.directory.appendingPathComponent(url.lastPathComponent))
                }
            }
            let clock = ContinuousClock()
            let start = clock.now
            let process = try scope.start(
                binary,
                ["--session", session, "--name", StressHome.senderName, "--interface", host.interface, "send"]
                    + urls.map(\.path) + ["--to", "\(receiverHost.address):\(receiver.port)", "--json"],
                environment: environment, namespace: host.namespace)
            let status: Int32
            do {
                status = try process.waitForExit(timeout: hangAfter)
            } catch {
                let last = (process.allStderrLines.suffix(2) + process.allStdoutLines.suffix(1)).joined(
                    separator: " | ")
                process.kill()
                _ = try? process.waitForExit(timeout: .seconds(5))
                return .hang("\(receiver.kind.rawValue), \(urls.count) files; last stderr: \(last)")
            }
            let elapsed = clock.now - start
            guard status == 0 else {
                let last = (process.allStderrLines.suffix(2) + process.allStdoutLines.suffix(1)).joined(
                    separator: " | ")
                return .failure("\(receiver.kind.rawValue): exit \(status): \(last)")
            }
            for url in urls {
                let received = receiver.directory.appendingPathComponent(url.lastPathComponent)
                guard try TestFiles.sha256(ofFile: received) == TestFiles.sha256(ofFile: url) else {
                    return .failure("\(receiver.kind.rawValue): \(url.lastPathComponent) differs")
                }
            }
            return .success(elapsed)
        } catch {
            return .failure("\(receiver.kind.rawValue): \(error)")
        }
    }

    private func report(_ counts: Counts, answered: Int) {
        let sorted = counts.durations.sorted()
        func seconds(_ duration: Duration?) -> String {
            guard let duration else { return "-" }
            let value = Double(duration.components.seconds) + Double(duration.components.attoseconds) / 1e18
            return String(format: "%.2f s", value)
        }
        print(
            "stress: \(counts.started) sends: \(counts.succeeded) ok, \(counts.failed) failed, \(counts.hung) hung"
                + " (over \(hangAfter)); send time median \(seconds(sorted.isEmpty ? nil : sorted[sorted.count / 2])),"
                + " max \(seconds(sorted.last)); \(answered) prompts answered by typing y")
        for (kind, row) in counts.perKind.sorted(by: { $0.key < $1.key }) {
            print("stress:   \(kind): \(row.ok) ok, \(row.failed) failed, \(row.hung) hung")
        }
        for problem in counts.problems { print("stress:   \(problem)") }
    }
}
