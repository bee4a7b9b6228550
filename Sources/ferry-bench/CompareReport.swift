import Foundation

/// One target of issues 11 and 27: a measured value (a ratio, or MiB), its bound, and whether it is met.
struct TargetCheck {
    var text: String
    var value: Double?
    var bound: Double
    var atMost: Bool
    var stretch = false
    var unit = "x"

    var verdict: String {
        guard let value else { return "- (not measured)" }
        return (atMost ? value <= bound : value >= bound) ? "met" : "not met"
    }

    var line: String {
        let bound = (atMost ? "<= " : ">= ") + Self.format(bound, unit)
        let value = self.value.map { Self.format($0, unit) } ?? "-"
        return "    " + CompareReport.pad((stretch ? "stretch: " : "") + text, 50) + CompareReport.pad(bound, 14)
            + CompareReport.pad(value, 12) + verdict
    }

    static func format(_ value: Double, _ unit: String) -> String {
        unit == "x" ? String(format: "%.2fx", value) : String(format: "%.1f%@", value, unit)
    }

    /// `numerator / denominator` of two measured figures, or nil when one is missing.
    static func ratio(_ numerator: Double?, _ denominator: Double?) -> Double? {
        guard let numerator, let denominator, denominator > 0 else { return nil }
        return numerator / denominator
    }

    /// Kept from the issue: peak RSS at most 64 MiB per side, over every ferry contender of the row.
    static func peakRSS(_ results: [ContenderResult]) -> TargetCheck {
        let ferry = results.filter { $0.role == .ferry && $0.measured }
        let peaks = ferry.flatMap { [$0.senderPeak, $0.receiverPeak] }.compactMap { $0 }
        return TargetCheck(
            text: "ferry peak RSS, each side (kept)", value: peaks.max().map { Double($0) / 1_048_576 }, bound: 64,
            atMost: true, unit: " MiB")
    }
}

/// The printed table of one row: a line per contender with its medians, then the comparisons and the targets.
struct CompareReport {
    var row: CompareBenchmark.Row
    var results: [ContenderResult]
    var rounds: Int

    var lines: [String] {
        var lines = ["", "row \(row.number): \(row.title)"]
        if let skip = row.skipReason {
            return lines + ["  skipped: \(skip)"]
        }
        lines += row.inMilliseconds ? Self.millisecondHeader : Self.throughputHeader
        for result in results {
            let name = result.name + (result.role == .fairness ? " [fairness]" : "")
            if let skip = result.skipReason {
                lines.append("  " + Self.pad(name, 44) + "skipped: \(skip)")
            } else if let failure = result.failure {
                lines.append("  " + Self.pad(name, 44) + "FAILED")
                lines += failure.split(separator: "\n").prefix(8).map { "      \($0)" }
            } else {
                lines.append(
                    "  " + Self.pad(name, 44) + (row.inMilliseconds ? milliseconds(result) : throughput(result)))
            }
        }
        lines += row.notes(results).map { "  " + $0 }
        let targets = row.targets(results)
        if !targets.isEmpty {
            lines.append("  targets (issues 11 and 27):")
            lines += targets.map(\.line)
        }
        return lines
    }

    static let throughputHeader = [
        "  " + pad("contender", 44) + pad("MB/s", 9) + pad("send CPU", 10) + pad("recv CPU", 10) + pad("both CPU", 10)
            + pad("peak RSS send/recv", 20) + "MB/s by round",
        "  " + pad("", 44) + pad("", 9) + pad("s/GiB", 10) + pad("s/GiB", 10) + pad("s/GiB", 10)
            + pad("MiB (ferry only)", 20),
    ]

    /// A row of fixed costs (row 6): the median time and CPU milliseconds of one run instead of MB/s and s/GiB.
    static let millisecondHeader = [
        "  " + pad("contender", 44) + pad("ms", 9) + pad("send CPU", 10) + pad("recv CPU", 10) + "ms by round",
        "  " + pad("", 44) + pad("", 9) + pad("ms", 10) + pad("ms", 10),
    ]

    /// A measured contender's figures: MB/s, CPU per GiB of each end and both, peak RSS (ferry), MB/s by round.
    private func throughput(_ result: ContenderResult) -> String {
        let rss =
            result.role == .ferry
            ? "\(Self.mebibytes(result.senderPeak)) / \(Self.mebibytes(result.receiverPeak)) MiB" : "-"
        let byRound = result.runs.map {
            String(format: "%.0f", Double(result.bytes) / max($0.elapsed.seconds, 1e-9) / 1e6)
        }
        return Self.pad(Self.number(result.rate.map { $0 / 1e6 }, "%.1f"), 9)
            + Self.pad(Self.number(result.senderCPU, "%.2f"), 10)
            + Self.pad(Self.number(result.receiverCPU, "%.2f"), 10)
            + Self.pad(Self.number(result.bothCPU, "%.2f"), 10) + Self.pad(rss, 20) + byRound.joined(separator: " ")
    }

    /// A measured contender's figures in a row of fixed costs: ms, CPU ms of each end, ms by round.
    private func milliseconds(_ result: ContenderResult) -> String {
        let byRound = result.runs.map { String(format: "%.0f", $0.elapsed.seconds * 1000) }
        return Self.pad(Self.number(result.medianMilliseconds, "%.1f"), 9)
            + Self.pad(Self.number(result.senderSeconds.map { $0 * 1000 }, "%.1f"), 10)
            + Self.pad(Self.number(result.receiverMilliseconds, "%.1f"), 10) + byRound.joined(separator: " ")
    }

    /// "ferry against X: 0.73x the throughput, 1.40x the CPU of both ends" for each measured contender that is not
    /// ferry (a row's other ferry contenders are named in their own lines: "ferry --rehash against X").
    static func against(_ ferry: String, _ results: [ContenderResult]) -> [String] {
        guard let mine = results.first(where: { $0.name == ferry && $0.measured }) else { return [] }
        let name = results.contains { $0.role == .ferry && $0.name != ferry } ? ferry : "ferry"
        return results.filter { $0.role != .ferry && $0.measured }.map { other in
            let rate = TargetCheck.ratio(mine.rate, other.rate).map { String(format: "%.2fx", $0) } ?? "-"
            let cpu = TargetCheck.ratio(mine.bothCPU, other.bothCPU).map { String(format: "%.2fx", $0) } ?? "-"
            return "\(name) against \(other.name): \(rate) the throughput, \(cpu) the CPU per GiB of both ends"
        }
    }

    static func result(_ name: String, in results: [ContenderResult]) -> ContenderResult? {
        results.first { $0.name == name && $0.measured }
    }

    static func number(_ value: Double?, _ format: String) -> String {
        value.map { String(format: format, $0) } ?? "-"
    }

    static func mebibytes(_ bytes: Int?) -> String {
        bytes.map { String(format: "%.1f", Double($0) / 1_048_576) } ?? "-"
    }

    static func pad(_ text: String, _ width: Int) -> String {
        text.count >= width ? text + " " : text + String(repeating: " ", count: width - text.count)
    }
}
