import FerryTestSupport
import Foundation

/// `ferry-bench compare`: ferry beside the tools people would use instead, started by the bench itself (scp into
/// sshd, an rsync daemon, nc, tar), on the same files, contenders alternating within each round, medians of the
/// rounds; throughput and CPU per GiB of both ends, ratios and the targets of issues 11 and 27.
///
/// Why one invocation: the machine is shared and its load changes by the minute; only figures measured in the
/// same rounds can be divided by each other.
struct CompareBenchmark: BenchRows {
    var options: CompareOptions
    let scope = BenchScope.shared

    /// One row: what moves, who moves it, and what ferry must reach.
    struct Row {
        var number: String
        var title: String
        /// Payload bytes of one run (to each receiver).
        var bytes: Int
        var contenders: [Contender] = []
        var skipReason: String?
        /// Lines printed under the table: how ferry compares with each contender, and how things were measured.
        var notes: ([ContenderResult]) -> [String] = { _ in [] }
        var targets: ([ContenderResult]) -> [TargetCheck] = { _ in [] }
        /// A row of fixed costs (row 6): the table gives milliseconds per run and CPU milliseconds, not MB/s and
        /// CPU per GiB.
        var inMilliseconds = false
    }

    /// Runs the selected rows and prints their tables; true when nothing failed (targets missed are not failures).
    func run() -> Bool {
        let signalSources = scope.cleanUpOnSignals()
        defer { withExtendedLifetime(signalSources) {} }
        header().forEach { print($0) }
        fflush(nil)
        var failed = 0
        for number in options.rows {
            let lines: [String]
            do {
                defer {
                    scope.cleanUp()
                    if number == "2" { Self.noteRowTwoRemovals() }
                }
                let row = try self.row(number)
                let results = measure(row)
                failed += results.filter { $0.failure != nil }.count
                lines = CompareReport(row: row, results: results, rounds: options.rounds).lines
            } catch {
                failed += 1
                lines = ["", "row \(number): FAILED before measuring: \(error)"]
            }
            lines.forEach { print($0) }
            fflush(nil)
        }
        print("")
        print("load average at the end: \(Self.loadAverage); the bench's own peak RSS \(Self.ownPeakMiB)")
        print(failed == 0 ? "compare: every contender measured" : "compare: \(failed) contender(s) or row(s) FAILED")
        return failed == 0
    }

    private func row(_ number: String) throws -> Row {
        switch number {
        case "1": return try rowOne()
        case "2": return try rowTwo()
        case "3": return try rowThree()
        case "4": return try rowFour()
        case "5": return try rowFive()
        default: return try rowSix()
        }
    }

    /// One untimed warm-up round (page cache, binaries, keys), then `options.rounds` timed rounds; the contenders'
    /// order rotates by one each round, so none is always first after the files were written.
    private func measure(_ row: Row) -> [ContenderResult] {
        var results = row.contenders.map {
            ContenderResult(name: $0.name, role: $0.role, skipReason: $0.skipReason ?? row.skipReason, bytes: row.bytes)
        }
        guard row.skipReason == nil else { return results }
        for round in 0...options.rounds {
            let count = row.contenders.count
            for index in (0..<count).map({ ($0 + round) % count }) {
                guard results[index].skipReason == nil, results[index].failure == nil else { continue }
                let label = round == 0 ? "warm-up" : "round \(round)/\(options.rounds)"
                do {
                    let run = try row.contenders[index].body()
                    // Untimed: on a disk mounted with `discard` (this machine's), the copy a contender removed is
                    // discarded when the journal next commits, and whichever contender syncs next (ferry, rsync
                    // --fsync, nc; sync) waited for that in its own sync: 1.5-1.9 s of a 1 GiB row (an `fdatasync`
                    // right after removing 1 GiB, against 0.03 s once settled). Every contender starts settled.
                    sync()
                    if round > 0 { results[index].runs.append(run) }
                    let rate = Double(row.bytes) / max(run.elapsed.seconds, 1e-9) / 1e6
                    let figure =
                        row.inMilliseconds
                        ? String(format: "%.1f ms", run.elapsed.seconds * 1000) : String(format: "%.1f MB/s", rate)
                    progress(row.number, "\(label): \(results[index].name) \(figure)")
                } catch {
                    results[index].failure = "\(error)"
                    progress(row.number, "\(label): \(results[index].name) FAILED")
                }
            }
        }
        return results
    }

    private func header() -> [String] {
        let ferry = (try? FerryBinary.url.path) ?? "(not found: \(String(describing: try? FerryBinary.url)))"
        let source = ProcessInfo.processInfo.environment["FERRY_BINARY"].map { _ in " (FERRY_BINARY)" } ?? ""
        let rounds = options.rounds < 3 ? " (fewer than 3: a check, not figures for the issue)" : ""
        return [
            "ferry-bench compare: scale \(options.scaleName), rows \(options.rows.joined(separator: ",")), "
                + "\(options.rounds) timed round(s)\(rounds) after 1 untimed warm-up round; figures are medians",
            "ferry: \(ferry)\(source); \(ProcessInfo.processInfo.activeProcessorCount) CPUs; uid \(getuid()); "
                + "load average at the start: \(Self.loadAverage)",
            "ferry's Swift runtime: \(Self.swiftRuntimeLinking(of: ferry))",
            "files: under \(Self.scratch) (\(Self.fileSystem(of: Self.scratch))), sources and copies of every contender; "
                + "TMPDIR=/dev/shm runs them all in memory, without the disk",
        ] + (Self.isUnjournaledExt4(Self.scratch) ? Self.unjournaledNote : []) + [
            "MB/s: 10^6 bytes per second, from the sending end's start until both ends have exited (ferry: until the",
            "  receiver has published and exited). CPU s/GiB: user + system seconds of all processes of one end per 2^30",
            "  bytes moved, from wait4 of each end's process (its reaped children included). Peak RSS: MiB (2^20 bytes),",
            "  the highest VmHWM of /proc/PID/status read while ferry ran (at least every 50 ms; wait4's ru_maxrss would",
            "  include the bench's own peak, \(Self.ownPeakMiB) now, which a posix_spawn child holds until its exec).",
        ]
    }

    /// Whether `binary` loads the Swift runtime as shared libraries (from `ldd`). Why the header says it: every
    /// ferry process of a row pays its start, and a plain `swift build -c release` binary spends about 20 ms more
    /// CPU per start in the dynamic loader and the runtime's conformance scans than one built with
    /// `--static-swift-stdlib` (README's benchmark build; ARCHITECTURE "A small file end to end"): row 2's two
    /// processes per send and row 6's sends see it, the baselines' C programs do not.
    static func swiftRuntimeLinking(of binary: String) -> String {
        guard let result = try? FerryProcess.run("ldd", [binary]), result.status == 0 else { return "unknown (ldd)" }
        return result.stdout.contains("libswiftCore.so")
            ? "shared libraries (not README's --static-swift-stdlib build: each process start costs more)"
            : "linked in (--static-swift-stdlib)"
    }

    /// The directory the bench's files go under (TMPDIR, else /tmp).
    static var scratch: String { FileManager.default.temporaryDirectory.path }

    /// The type and the options of the file system mounted at the longest mount point above `path`, from
    /// /proc/self/mounts ("ext4 rw,relatime,discard"): whether the copies go to a disk (and how) or to memory.
    static func fileSystem(of path: String) -> String {
        mountEntry(of: path).map { "\($0.type) \($0.options)" } ?? "file system unknown"
    }

    /// The entry of /proc/self/mounts with the longest mount point above `path`.
    static func mountEntry(of path: String) -> (device: String, type: String, options: String)? {
        let mounts = (try? String(contentsOfFile: "/proc/self/mounts", encoding: .utf8)) ?? ""
        let resolved = URL(fileURLWithPath: path).resolvingSymlinksInPath().path
        var best: (point: String, entry: (device: String, type: String, options: String))?
        for line in mounts.split(separator: "\n") {
            let fields = line.split(separator: " ").map(String.init)
            guard fields.count >= 4 else { continue }
            let point = fields[1].replacingOccurrences(of: "\\040", with: " ")
            let inside = point == "/" || resolved == point || resolved.hasPrefix(point + "/")
            if inside, point.count >= (best?.point.count ?? -1) { best = (point, (fields[0], fields[2], fields[3])) }
        }
        return best?.entry
    }

    /// Said under the header when the files go to ext4 without a journal (this development machine's disk).
    static let unjournaledNote = [
        "  ext4 without a journal: a new inode is allocated past every inode of its group deleted in the last 60 s, or",
        "  360 s while that inode's table block is dirty (the kernel's recently_deleted), so after many deletions (another",
        "  run's clean-up, a build) every contender creates its files more slowly, by how much depending on when the",
        "  blocks were last written back (ferry syncs each publish turn, rsync and tar never): row 2's ratios then follow",
        "  the disk's last minutes; measured so far, the contenders that do not sync lost the most.",
    ]

    /// Where the bench notes when it last removed row 2's copies (some 40 000 files at full scale): the file's
    /// modification time.
    static var rowTwoRemovalsMarker: String { scratch + "/ferry-bench-row-2-removed" }

    /// Notes that row 2's copies were just removed.
    static func noteRowTwoRemovals() {
        FileManager.default.createFile(atPath: rowTwoRemovalsMarker, contents: Data())
    }

    /// Seconds since this bench last removed row 2's copies under the same directory, or nil (never, or unknown).
    static func secondsSinceRowTwoRemovals() -> Double? {
        guard let attributes = try? FileManager.default.attributesOfItem(atPath: rowTwoRemovalsMarker),
            let date = attributes[.modificationDate] as? Date
        else { return nil }
        return Date().timeIntervalSince(date)
    }

    /// Whether `path` is on ext4 mounted without a journal: an ext4 device with no entry in /proc/fs/jbd2.
    static func isUnjournaledExt4(_ path: String) -> Bool {
        guard let mount = mountEntry(of: path), mount.type == "ext4", mount.device.hasPrefix("/dev/"),
            let journals = try? FileManager.default.contentsOfDirectory(atPath: "/proc/fs/jbd2")
        else { return false }
        let device = String(mount.device.split(separator: "/").last ?? "")
        return !journals.contains { $0.hasPrefix(device + "-") }
    }

    /// /proc/loadavg's three averages.
    static var loadAverage: String {
        let text = (try? String(contentsOfFile: "/proc/loadavg", encoding: .utf8)) ?? "?"
        return text.split(separator: " ").prefix(3).joined(separator: " ")
    }

    /// This process's peak RSS (`VmHWM`).
    static var ownPeakMiB: String {
        let status = (try? String(contentsOfFile: "/proc/self/status", encoding: .utf8)) ?? ""
        let line = status.split(separator: "\n").first { $0.hasPrefix("VmHWM:") }
        let kib = line.flatMap { Double($0.split(separator: " ").dropFirst().first ?? "") } ?? 0
        return String(format: "%.1f MiB", kib / 1024)
    }
}

extension CompareBenchmark {
    /// scp's sshd and the rsync daemon for one row, under `work`, the daemon writing into `destination`; each is nil
    /// where the machine lacks it (its contender then says why it was skipped).
    func daemonBaselines(in work: URL, destination: URL) throws -> (SecureCopyBaseline?, RsyncDaemonBaseline?) {
        let ssh =
            SecureCopyBaseline.unavailable == nil
            ? try SecureCopyBaseline(in: work.appendingPathComponent("ssh")) : nil
        let rsync =
            RsyncDaemonBaseline.unavailable == nil
            ? try RsyncDaemonBaseline(in: work.appendingPathComponent("rsyncd"), destination: destination) : nil
        return (ssh, rsync)
    }
}
