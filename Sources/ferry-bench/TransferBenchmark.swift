import FerryTestSupport
import Foundation

/// `ferry-bench transfer`: file transfers by the real `ferry` binary, each row beside a baseline measured
/// in the same run (nc, tar, the link rate, another ferry configuration), with its target and verdict.
///
/// Why baselines in the same run: the machine is shared and its disk and CPU vary; a ratio to something
/// measured a moment earlier on the same files means more than an absolute figure.
struct TransferBenchmark: BenchRows {
    var options: TransferOptions
    let scope = BenchScope.shared
    let clock = ContinuousClock()

    /// Runs the selected rows and prints the table; true when no row failed.
    func run() -> Bool {
        let signalSources = scope.cleanUpOnSignals()
        defer { withExtendedLifetime(signalSources) {} }
        print(
            String(
                format: "ferry-bench transfer: scale %.2f, rows %@, best of %d", options.scale,
                options.rows.joined(separator: ",") as NSString, options.repeats))
        print(TransferRowReport.header)
        fflushStandardOutput()
        var reports: [TransferRowReport] = []
        for row in options.rows {
            for report in run(row: row) {
                report.lines.forEach { print($0) }
                reports.append(report)
            }
            fflushStandardOutput()
        }
        let failed = reports.filter { $0.verdict == .fail }.count
        let skipped = reports.filter { $0.verdict == .skipped }.count
        print("rows: \(reports.count - failed - skipped) pass, \(failed) FAIL, \(skipped) skipped")
        return failed == 0
    }

    /// One row, cleaned up afterwards whatever happened; row f gives two reports (sender and receiver).
    private func run(row: String) -> [TransferRowReport] {
        defer { scope.cleanUp() }
        switch row {
        case "a": return [rowA()]
        case "b": return [rowB()]
        case "c": return [rowC()]
        case "d": return [rowD()]
        case "e": return [rowE()]
        default: return rowF()
        }
    }

    /// The fastest of `options.repeats` runs of `body`.
    func best(_ body: () throws -> Duration) throws -> Duration {
        var fastest: Duration?
        for _ in 0..<options.repeats {
            let elapsed = try body()
            fastest = min(fastest ?? elapsed, elapsed)
        }
        return fastest ?? .zero
    }

    private func fflushStandardOutput() {
        fflush(nil)
    }
}
