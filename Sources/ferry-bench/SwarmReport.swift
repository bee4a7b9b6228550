import FerryTestSupport
import Foundation

/// The printed figures of `ferry-bench swarm`: a block per broadcast, then a table and the targets of issue 12.
enum SwarmReport {
    /// The block of one broadcast; `one` is the 1-receiver broadcast of the same mode (nil when it is this one).
    static func lines(_ run: SwarmRun, against one: SwarmRun?, options: SwarmOptions) -> [String] {
        let count = run.receivers.count
        let seconds = run.elapsed.seconds
        let relative = ratio(run, one).map { String(format: "%.2fx", $0) } ?? "-"
        var lines = [
            "",
            "\(count) receiver(s), \(run.mode.name): "
                + String(
                    format: "%.1f s, %@ the 1-receiver send; sender's link out %.1f MB = %.2f copies of %@, in %.1f MB",
                    seconds, relative, Double(run.sender.sentBytes) / 1e6, run.copies, mebibytes(run.payloadBytes),
                    Double(run.sender.receivedBytes) / 1e6),
            "  receivers in  MB: " + spread(run.receiverLinks.map { Double($0.receivedBytes) / 1e6 }),
            "  receivers out MB: " + spread(run.receiverLinks.map { Double($0.sentBytes) / 1e6 }),
        ]
        let receiverSeconds = run.receiverSeconds.compactMap { $0 }
        let senderSeconds = run.senderUsage.map { $0.cpuTime.seconds }
        let ferrySeconds = (senderSeconds ?? 0) + receiverSeconds.reduce(0, +)
        let cpus = Double(ProcessInfo.processInfo.activeProcessorCount)
        var cpu = "  CPU s: sender " + number(senderSeconds, "%.2f")
        if let usage = run.senderUsage {
            cpu += String(format: " (user %.2f, system %.2f)", usage.userTime.seconds, usage.systemTime.seconds)
        }
        cpu += "; receivers " + spread(receiverSeconds, format: "%.2f")
        cpu += String(
            format: "; all ferry processes %.1f s = %.0f%% of %.0f CPUs over the run", ferrySeconds,
            100 * ferrySeconds / max(seconds * cpus, 1e-9), cpus)
        lines.append(cpu)
        let linkBusy = Double(run.sender.sentBytes) * 8 / max(seconds * Double(options.mbit) * 1e6, 1e-9)
        let ferryShare = ferrySeconds / max(seconds * cpus, 1e-9)
        let machine =
            run.machineBusy.map {
                String(
                    format: "%.0f%% (ferry's processes %.0f%%, all others %.0f%%)", 100 * $0, 100 * ferryShare,
                    100 * max(0, $0 - ferryShare))
            } ?? "-"
        var limit = "neither saturated"
        if linkBusy >= 0.8 {
            limit = "the sender's link limits"
        } else if (run.machineBusy ?? 0) >= 0.85 {
            limit = "the CPU, not the links, limits"
        }
        lines.append(
            String(format: "  sender's link busy %.0f%% of the run; machine CPU busy ", 100 * linkBusy) + machine + ": "
                + limit)
        let files =
            "  files: \(run.identical) of \(count) receiver(s) hold every file, identical to the source (SHA-256)"
        lines.append(files)
        lines += run.problems.prefix(8).map { "  PROBLEM: \($0)" }
        return lines
    }

    /// The table of every broadcast and the targets of issue 12 (for the largest count, 16 by default).
    static func summary(_ runs: [SwarmRun], modes: [SwarmBenchmark.Mode], options: SwarmOptions) -> [String] {
        var lines = [
            "", "swarm: \(mebibytes(options.bytes)) to each receiver, \(options.mbit) Mbit/s per link",
            "  " + CompareReport.pad("receivers", 11) + CompareReport.pad("mode", 8) + CompareReport.pad("time s", 9)
                + CompareReport.pad("x 1-recv", 10) + CompareReport.pad("copies on sender's link", 25) + "files",
        ]
        for run in runs {
            let one = runs.first { $0.receivers.count == 1 && $0.mode == run.mode }
            lines.append(
                "  " + CompareReport.pad("\(run.receivers.count)", 11) + CompareReport.pad(run.mode.name, 8)
                    + CompareReport.pad(String(format: "%.1f", run.elapsed.seconds), 9)
                    + CompareReport.pad(ratio(run, one).map { String(format: "%.2fx", $0) } ?? "-", 10)
                    + CompareReport.pad(String(format: "%.2f", run.copies), 25)
                    + (run.identical == run.receivers.count
                        ? "identical" : "\(run.identical)/\(run.receivers.count) identical"))
        }
        let largest = options.counts.max() ?? 1
        for mode in modes {
            let run = runs.first { $0.receivers.count == largest && $0.mode == mode }
            let one = runs.first { $0.receivers.count == 1 && $0.mode == mode }
            lines.append("  targets (issue 12), \(mode.name):")
            lines.append(
                TargetCheck(
                    text: "\(largest) receivers: time / 1 receiver", value: run.flatMap { ratio($0, one) }, bound: 2.5,
                    atMost: true
                ).line)
            lines.append(
                TargetCheck(
                    text: "\(largest) receivers: copies on the sender's link", value: run?.copies, bound: 3,
                    atMost: true
                ).line)
            let identical = runs.filter { $0.mode == mode }
            let verdict =
                identical.isEmpty
                ? "- (not measured)" : identical.allSatisfy { $0.identical == $0.receivers.count } ? "met" : "not met"
            lines.append(
                "    " + CompareReport.pad("every receiver ends with identical files", 50)
                    + CompareReport.pad("all", 14) + CompareReport.pad("", 12) + verdict)
        }
        if largest != 16 {
            lines.append("  (the issue's targets are for 16 receivers; these are for \(largest))")
        }
        lines.append("load average at the end: \(CompareBenchmark.loadAverage)")
        return lines
    }

    /// This broadcast's time over the 1-receiver broadcast's.
    static func ratio(_ run: SwarmRun, _ one: SwarmRun?) -> Double? {
        TargetCheck.ratio(run.elapsed.seconds, one?.elapsed.seconds)
    }

    /// "min 67.2, median 67.3, max 67.4 (67.2 67.3 ...)", or the one value.
    static func spread(_ values: [Double], format: String = "%.1f") -> String {
        guard !values.isEmpty else { return "-" }
        let each = values.map { String(format: format, $0) }
        guard values.count > 1 else { return each[0] }
        let sorted = values.sorted()
        return "min " + String(format: format, sorted[0]) + ", median "
            + String(format: format, ContenderResult.median(values) ?? 0) + ", max "
            + String(format: format, sorted[sorted.count - 1]) + " (each: " + each.joined(separator: " ") + ")"
    }

    static func number(_ value: Double?, _ format: String) -> String {
        value.map { String(format: format, $0) } ?? "-"
    }

    static func mebibytes(_ bytes: Int) -> String {
        String(format: "%g MiB", Double(bytes) / 1_048_576)
    }
}
