import FerryTestSupport
import Foundation

/// Rows e and f: what a transfer costs the machine (sender CPU time, peak memory).
extension TransferBenchmark {
    /// e. Broadcast 256 MiB to 4 receivers against 1 receiver: the sender's CPU time (user + system, from
    /// wait4). A chunk is read, compressed and hashed once for all peers, so 4 peers must cost < 2x.
    func rowE() -> TransferRowReport {
        let bytes = options.scaled(256 << 20)
        var report = TransferRowReport(
            row: "e", name: "broadcast \(size(bytes)): 4 peers CPU", baselineName: "1 peer",
            target: .ratioAtMost(2.0))
        do {
            let work = try scope.directory("ferry-bench-e")
            progress("e", "writing \(size(bytes)) of random bytes; broadcast to 1 receiver, then to 4")
            let source = try TestFiles(in: work).random("source/random.bin", size: bytes, seed: 5)
            let digest = try TestFiles.sha256(ofFile: source)
            var one: ResourceUsage?
            var four: ResourceUsage?
            for _ in 0..<options.repeats {
                let single = try senderUsage(broadcast(source, digest: digest, receivers: 1, work: work))
                if single.cpuTime < one?.cpuTime ?? .seconds(1 << 40) { one = single }
                let several = try senderUsage(broadcast(source, digest: digest, receivers: 4, work: work))
                if several.cpuTime < four?.cpuTime ?? .seconds(1 << 40) { four = several }
            }
            if let one, let four {
                report.baseline = Quantity(value: one.cpuTime.seconds, unit: .seconds)
                report.figure = Quantity(value: four.cpuTime.seconds, unit: .seconds)
                // On loopback the kernel runs the receiving side of every TCP stream in the sender's context, so
                // system time grows with each peer whatever the sender does; user time shows the sender's own work.
                report.note = String(
                    format: "user %.2f s vs %.2f s (%.2fx), system %.2f s vs %.2f s (%.2fx)",
                    four.userTime.seconds, one.userTime.seconds,
                    four.userTime.seconds / max(one.userTime.seconds, 1e-9),
                    four.systemTime.seconds, one.systemTime.seconds,
                    four.systemTime.seconds / max(one.systemTime.seconds, 1e-9))
            }
        } catch {
            report.problem = "\(error)"
        }
        return report
    }

    /// f. A 4 GiB file to one receiver: peak RSS of the sender and of the receiver (wait4's ru_maxrss), each
    /// at most 64 MiB; the baseline is the same transfer of a 1 MiB file (the start-up footprint).
    func rowF() -> [TransferRowReport] {
        let bytes = options.scaled(4 << 30)
        let limit = Quantity(value: Double(64 << 20), unit: .bytes)
        var reports = ["sender", "receiver"].map { side in
            TransferRowReport(
                row: "f", name: "\(size(bytes)) file: \(side) peak RSS", baselineName: "1 MiB",
                target: .figureAtMost(limit))
        }
        do {
            let work = try scope.directory("ferry-bench-f")
            let files = TestFiles(in: work)
            let small = try files.random("small/small.bin", size: 1 << 20, seed: 6)
            let smallRun = try ferryCopy(
                [small], work: work, compress: "auto", digests: [TestFiles.sha256(ofFile: small)])
            for (index, usage) in [smallRun.sender, smallRun.receivers.first ?? nil].enumerated() {
                reports[index].baseline = usage.map { Quantity(value: Double($0.peakResidentBytes), unit: .bytes) }
            }
            progress("f", "1 MiB transfer done; writing \(size(bytes)) of random bytes and sending it")
            let large = try files.random("large/large.bin", size: bytes, seed: 7)
            let largeRun = try ferryCopy(
                [large], work: work, compress: "auto", digests: [TestFiles.sha256(ofFile: large)])
            for (index, usage) in [largeRun.sender, largeRun.receivers.first ?? nil].enumerated() {
                reports[index].figure = usage.map { Quantity(value: Double($0.peakResidentBytes), unit: .bytes) }
            }
        } catch {
            for index in reports.indices { reports[index].problem = "\(error)" }
        }
        return reports
    }

    private func senderUsage(_ result: FerryTransferRun.Result) throws -> ResourceUsage {
        guard let usage = result.sender else { throw BenchFailure("ferry send: no resource usage from wait4") }
        return usage
    }
}
