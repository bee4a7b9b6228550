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
            var one: Duration?
            var four: Duration?
            for _ in 0..<options.repeats {
                let single = try broadcast(source, digest: digest, receivers: 1, work: work)
                one = min(one ?? single, single)
                report.baseline = Quantity(value: (one ?? single).seconds, unit: .seconds)
                let several = try broadcast(source, digest: digest, receivers: 4, work: work)
                four = min(four ?? several, several)
                report.figure = Quantity(value: (four ?? several).seconds, unit: .seconds)
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

    /// One broadcast of `source` to `receivers` receivers of one session on loopback; the sender's CPU time.
    private func broadcast(_ source: URL, digest: String, receivers count: Int, work: TemporaryDirectory) throws
        -> Duration
    {
        let inboxes = (0..<count).map { work.url.appendingPathComponent("inbox-\($0)") }
        for inbox in inboxes { try FileManager.default.createDirectory(at: inbox, withIntermediateDirectories: true) }
        let result = try FerryTransferRun(
            scope: scope, home: work.url.appendingPathComponent("homes"), files: [source],
            receivers: inboxes.map { .init(directory: $0) }, broadcast: true,
            timeout: timeout(forBytes: try fileSize(source) * count)
        ).run()
        for inbox in inboxes {
            try verify(inbox.appendingPathComponent(source.lastPathComponent), matches: digest, of: source, "ferry")
            try FileManager.default.removeItem(at: inbox)
        }
        guard let usage = result.sender else { throw BenchFailure("ferry send: no resource usage from wait4") }
        return usage.cpuTime
    }
}
