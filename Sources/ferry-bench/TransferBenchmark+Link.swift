import FerryTestSupport
import Foundation

/// Row b: compressible text over a slow link between two network namespaces.
extension TransferBenchmark {
    /// The shaped link's rate.
    static let linkMbit = 100

    /// b. 1 GiB of text from host 0 to host 1 over a 100 Mbit/s token bucket: ferry's effective throughput
    /// (file bytes / time) against the link rate; compression must make the link look 2.5x faster.
    func rowB() -> TransferRowReport {
        let bytes = options.scaled(1 << 30)
        let linkRate = Quantity(value: Double(Self.linkMbit) * 1_000_000 / 8, unit: .bytesPerSecond)
        var report = TransferRowReport(
            row: "b", name: "\(size(bytes)) text, \(Self.linkMbit) Mbit/s link", baselineName: "link",
            target: .ratioAtLeast(2.5))
        report.baseline = linkRate
        guard TestBed.isAvailable.available else {
            report.skipReason = "network namespaces unavailable: \(TestBed.isAvailable.reason)"
            return report
        }
        do {
            let work = try scope.directory("ferry-bench-b")
            progress("b", "writing \(size(bytes)) of text")
            let files = TestFiles(in: work)
            let source = try files.text("source/text.txt", size: bytes, seed: 2)
            let digest = try TestFiles.sha256(ofFile: source)
            progress("b", "two namespaces, \(Self.linkMbit) Mbit/s token bucket; nc on a sample, then ferry")
            let bed = try scope.bed(hosts: 2, name: "bench")
            let (sender, receiver) = (bed.hosts[0], bed.hosts[1])
            try bed.limitRate(host: sender, mbit: Self.linkMbit, burstKiB: 64)
            // What the shaped link really carries, measured with nc on a sample of the same text.
            let sampleBytes = min(bytes, 16 << 20)
            let sample = try files.text("sample.txt", size: sampleBytes, seed: 2)
            let copy = work.url.appendingPathComponent("sample-copy.txt")
            let sampleTime = try NetcatBaseline(scope: scope, timeout: timeout(forBytes: sampleBytes)).copyFile(
                sample, to: copy, host: receiver.address, listenerNamespace: receiver.namespace,
                senderNamespace: sender.namespace
            ).elapsed
            report.note = "nc over the same link: \(Quantity.rate(bytes: sampleBytes, in: sampleTime).text)"
            let inbox = work.url.appendingPathComponent("inbox")
            try FileManager.default.createDirectory(at: inbox, withIntermediateDirectories: true)
            let elapsed = try best {
                let result = try FerryTransferRun(
                    scope: scope, home: work.url.appendingPathComponent("homes"), files: [source],
                    receivers: [
                        .init(
                            directory: inbox, namespace: receiver.namespace, interface: receiver.interface,
                            host: receiver.address)
                    ], senderNamespace: sender.namespace, senderInterface: sender.interface,
                    timeout: .seconds(60 + bytes / 1_000_000)
                ).run()
                try verify(inbox.appendingPathComponent(source.lastPathComponent), matches: digest, of: source, "ferry")
                try FileManager.default.removeItem(at: inbox.appendingPathComponent(source.lastPathComponent))
                return result.elapsed
            }
            report.figure = .rate(bytes: bytes, in: elapsed)
        } catch {
            report.problem = "\(error)"
        }
        return report
    }
}
