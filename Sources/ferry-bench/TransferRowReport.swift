import Foundation

/// A measured amount with its unit, printed the way people read it.
struct Quantity: Sendable {
    enum Unit: Sendable {
        case bytesPerSecond
        case seconds
        case bytes
    }

    var value: Double
    var unit: Unit

    static func rate(bytes: Int, in duration: Duration) -> Quantity {
        Quantity(value: Double(bytes) / max(duration.seconds, 1e-9), unit: .bytesPerSecond)
    }

    var text: String {
        switch unit {
        case .bytesPerSecond: return String(format: "%.1f MiB/s", value / 1_048_576)
        case .seconds: return String(format: "%.2f s", value)
        case .bytes: return String(format: "%.1f MiB", value / 1_048_576)
        }
    }
}

/// What a row must reach to pass: a bound on figure / baseline, or on the figure itself.
enum RowTarget: Sendable {
    case ratioAtLeast(Double)
    case ratioAtMost(Double)
    case figureAtMost(Quantity)

    var text: String {
        switch self {
        case .ratioAtLeast(let bound): return String(format: ">= %.2fx", bound)
        case .ratioAtMost(let bound): return String(format: "<= %.2fx", bound)
        case .figureAtMost(let bound): return "<= " + bound.text
        }
    }

    func isMet(figure: Quantity, ratio: Double?) -> Bool {
        switch self {
        case .ratioAtLeast(let bound): return (ratio ?? 0) >= bound
        case .ratioAtMost(let bound): return ratio.map { $0 <= bound } ?? false
        case .figureAtMost(let bound): return figure.value <= bound.value
        }
    }
}

/// One line of the transfer bench's table: figure, baseline, ratio, target, and pass, FAIL or skipped.
///
/// Why a value: a row that fails half-way still shows what it measured (usually the baseline), and the
/// table is printed the same way whatever happened.
struct TransferRowReport: Sendable {
    var row: String
    var name: String
    var figure: Quantity?
    var baselineName: String
    var baseline: Quantity?
    var target: RowTarget
    var problem: String?
    var skipReason: String?
    var note: String?

    init(row: String, name: String, baselineName: String, target: RowTarget) {
        self.row = row
        self.name = name
        self.baselineName = baselineName
        self.target = target
    }

    var ratio: Double? {
        guard let figure, let baseline, baseline.value > 0 else { return nil }
        return figure.value / baseline.value
    }

    enum Verdict: String {
        case pass
        case fail = "FAIL"
        case skipped
    }

    var verdict: Verdict {
        if skipReason != nil { return .skipped }
        guard problem == nil, let figure else { return .fail }
        return target.isMet(figure: figure, ratio: ratio) ? .pass : .fail
    }

    static let header = line("row", "measurement", "figure", "baseline", "ratio", "target", "result")

    var lines: [String] {
        let ratioText = ratio.map { String(format: "%.2fx", $0) } ?? "-"
        let baselineText = baseline.map { "\(baselineName) \($0.text)" } ?? "\(baselineName) -"
        var lines = [
            Self.line(row, name, figure?.text ?? "-", baselineText, ratioText, target.text, verdict.rawValue)
        ]
        if let skipReason { lines.append("       skipped: \(skipReason)") }
        if let problem { lines += problem.split(separator: "\n").prefix(12).map { "       \($0)" } }
        if let note { lines.append("       \(note)") }
        return lines
    }

    private static func line(
        _ row: String, _ name: String, _ figure: String, _ baseline: String, _ ratio: String, _ target: String,
        _ result: String
    ) -> String {
        func pad(_ text: String, _ width: Int) -> String {
            text.count >= width ? text + " " : text + String(repeating: " ", count: width - text.count)
        }
        return "  " + pad(row, 4) + pad(name, 40) + pad(figure, 14) + pad(baseline, 26) + pad(ratio, 8)
            + pad(target, 13) + result
    }
}
