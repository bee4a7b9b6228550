import FerryTestSupport
import Foundation

/// Rows a, c and d: transfers over loopback against nc, tar and ferry without compression.
extension TransferBenchmark {
    /// a. 1 GiB random over loopback: ferry send -> receive against `nc -l > file` / `nc -N < file`.
    func rowA() -> TransferRowReport {
        let bytes = options.scaled(1 << 30)
        var report = TransferRowReport(
            row: "a", name: "\(size(bytes)) random, loopback", baselineName: "nc", target: .ratioAtLeast(0.6))
        do {
            let work = try scope.directory("ferry-bench-a")
            progress("a", "writing \(size(bytes)) of random bytes")
            let source = try TestFiles(in: work).random("source/random.bin", size: bytes, seed: 1)
            let digest = try TestFiles.sha256(ofFile: source)
            let netcat = NetcatBaseline(scope: scope, timeout: timeout(forBytes: bytes))
            let copy = work.url.appendingPathComponent("nc.bin")
            let baseline = try best {
                let elapsed = try netcat.copyFile(source, to: copy).elapsed
                try verify(copy, matches: digest, of: source, "nc")
                try FileManager.default.removeItem(at: copy)
                return elapsed
            }
            report.baseline = .rate(bytes: bytes, in: baseline)
            progress("a", "nc: \(report.baseline?.text ?? "-"); ferry send -> receive")
            let elapsed = try best {
                try ferryCopy([source], work: work, compress: "auto", digests: [digest]).elapsed
            }
            report.figure = .rate(bytes: bytes, in: elapsed)
        } catch {
            report.problem = "\(error)"
        }
        return report
    }

    /// c. 256 MiB random with --compress auto against --compress none: auto must notice and not slow down.
    func rowC() -> TransferRowReport {
        let bytes = options.scaled(256 << 20)
        var report = TransferRowReport(
            row: "c", name: "\(size(bytes)) random, compress auto", baselineName: "none",
            target: .ratioAtLeast(0.95))
        do {
            let work = try scope.directory("ferry-bench-c")
            progress("c", "writing \(size(bytes)) of random bytes; ferry with --compress none, then auto")
            let source = try TestFiles(in: work).random("source/random.bin", size: bytes, seed: 3)
            let digest = try TestFiles.sha256(ofFile: source)
            var none: Duration?
            var auto: Duration?
            for _ in 0..<options.repeats {  // interleaved, so both see the same machine
                let plain = try ferryCopy([source], work: work, compress: "none", digests: [digest]).elapsed
                none = min(none ?? plain, plain)
                report.baseline = .rate(bytes: bytes, in: none ?? plain)
                let chosen = try ferryCopy([source], work: work, compress: "auto", digests: [digest]).elapsed
                auto = min(auto ?? chosen, chosen)
                report.figure = .rate(bytes: bytes, in: auto ?? chosen)
            }
        } catch {
            report.problem = "\(error)"
        }
        return report
    }

    /// d. 1000 files of 4-64 KiB (seeded sizes) against `tar c | nc -N` -> `nc -l | tar x`.
    func rowD() -> TransferRowReport {
        let count = max(10, Int(1000 * min(options.scale, 1)))
        var report = TransferRowReport(
            row: "d", name: "\(count) files of 4-64 KiB, loopback", baselineName: "tar|nc", target: .ratioAtLeast(0.5))
        do {
            let work = try scope.directory("ferry-bench-d")
            progress("d", "writing \(count) files; tar | nc, then ferry")
            let tree = try TestFiles(in: work).tree(root: "source", files: count, sizes: 4096...65_536, seed: 4)
            let bytes = tree.reduce(0) { $0 + $1.size }
            let source = work.url.appendingPathComponent("source")
            let netcat = NetcatBaseline(scope: scope, timeout: timeout(forBytes: bytes))
            let baseline = try best {
                let destination = work.url.appendingPathComponent("tar")
                try FileManager.default.createDirectory(at: destination, withIntermediateDirectories: true)
                let elapsed = try netcat.copyTree(source, to: destination).elapsed
                try verifyTree(tree, source: source, copy: destination, "tar|nc")
                try FileManager.default.removeItem(at: destination)
                return elapsed
            }
            report.baseline = .rate(bytes: bytes, in: baseline)
            let files = tree.map { source.appendingPathComponent($0.path) }
            let elapsed = try best {
                let inbox = work.url.appendingPathComponent("inbox")
                try FileManager.default.createDirectory(at: inbox, withIntermediateDirectories: true)
                let result = try FerryTransferRun(
                    scope: scope, home: work.url.appendingPathComponent("homes"), files: files,
                    receivers: [.init(directory: inbox)], timeout: timeout(forBytes: bytes)
                ).run()
                try verifyTree(tree, source: source, copy: inbox, "ferry")
                try FileManager.default.removeItem(at: inbox)
                return result.elapsed
            }
            report.figure = .rate(bytes: bytes, in: elapsed)
            report.note = "\(count) files, \(size(bytes)) in all"
        } catch {
            report.problem = "\(error)"
        }
        return report
    }
}
