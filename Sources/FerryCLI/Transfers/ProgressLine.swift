import FerryTransfer

/// One line of a live progress bar: who, how far, how fast, how long.
///
/// ```
/// alice-laptop      [##########..........]   50%   5.0 MiB/10.0 MiB   1.2 MiB/s     0:05
/// bob               [#####...............]   25%   2.5 MiB/10.0 MiB          stalled 12s
/// ```
/// A pure function of a snapshot and a width, so the exact text is pinned by tests; `ProgressBoard` draws these
/// lines on the terminal. The name (escaped: it comes from the peer) takes a fixed column so that the bars of
/// several peers line up; the bar gets what the width leaves, and is dropped on a narrow terminal before the
/// numbers are.
public struct ProgressLine: Sendable, Equatable {
    /// Columns of the name; longer names are cut with "~".
    public static let nameWidth = 16
    /// The narrowest bar worth drawing (brackets included).
    public static let minimumBarWidth = 7

    /// Who the transfer is with (as received from the network; escaped when rendered).
    public var name: String
    /// Bytes transferred so far.
    public var bytesDone: UInt64
    /// Bytes of the whole transfer; the bar and the percentage are `bytesDone` of this.
    public var totalBytes: UInt64
    /// Bytes per second; 0 while unknown.
    public var rate: Double
    /// Seconds left; nil while unknown.
    public var secondsLeft: Double?
    /// Whole seconds without progress, once that is at least `ProgressLine.stalledAfter`: the rate and the time
    /// left are then replaced by "stalled 12s" (they describe the past, not what happens now).
    public var stalledSeconds: Int?

    /// No progress for this long and the line says "stalled".
    public static let stalledAfter = Duration.seconds(5)

    /// A line from a snapshot of the transfer; not stalled unless `stalledSeconds` is given.
    public init(
        name: String, bytesDone: UInt64, totalBytes: UInt64, rate: Double, secondsLeft: Double?,
        stalledSeconds: Int? = nil
    ) {
        self.name = name
        self.bytesDone = bytesDone
        self.totalBytes = totalBytes
        self.rate = rate
        self.secondsLeft = secondsLeft
        self.stalledSeconds = stalledSeconds
    }

    /// This line as it reads `since` the last progress until `now`: stalled once that is `stalledAfter` or more.
    public func stalled(since lastProgress: ContinuousClock.Instant, now: ContinuousClock.Instant) -> ProgressLine {
        var line = self
        let quiet = now - lastProgress
        line.stalledSeconds = quiet >= Self.stalledAfter ? Int(quiet.components.seconds) : nil
        return line
    }

    /// The line of an engine progress event.
    public init(_ progress: TransferProgress) {
        self.init(
            name: progress.peer.displayName, bytesDone: progress.bytesDone, totalBytes: progress.totalBytes,
            rate: progress.rate, secondsLeft: progress.secondsLeft)
    }

    /// Whole percent done, 0 to 100 (100 for an empty transfer).
    public var percent: Int {
        guard totalBytes > 0 else {
            return 100
        }
        return Int(min(100, (Double(min(bytesDone, totalBytes)) * 100 / Double(totalBytes)).rounded(.down)))
    }

    /// The line, at most `width` characters (at least the name column and the percentage are kept).
    public func render(width: Int) -> String {
        // The name gives way on a very narrow terminal, so that the percentage always shows.
        let label = Self.column(TerminalText.escape(name), width: max(1, min(Self.nameWidth, width - 6)))
        let percentText = String(repeating: " ", count: 3 - String(percent).count) + "\(percent)%"
        // Fixed widths for what changes during a transfer, so that the bar does not jump as the numbers grow.
        var details = [
            percentText,
            Self.padded(TransferFormat.bytes(bytesDone), 8) + "/" + TransferFormat.bytes(totalBytes),
        ]
        if let stalledSeconds {
            // In the columns of the rate and the time left (10 + 2 + 7), so that the bar keeps its place.
            details.append(Self.padded("stalled \(Self.quietTime(stalledSeconds))", 19))
        } else {
            details += [Self.padded(TransferFormat.rate(rate), 10), Self.padded(TransferFormat.eta(secondsLeft), 7)]
        }
        // Drop details from the end until the line fits, keeping at least the percentage.
        var kept = details.count
        let labelWidth = TerminalText.width(of: label)
        while kept > 1, labelWidth + 2 + details.prefix(kept).joined(separator: "  ").count > width {
            kept -= 1
        }
        let tail = details.prefix(kept).joined(separator: "  ")
        let room = width - labelWidth - 2 - tail.count - 2
        if kept == details.count, room >= Self.minimumBarWidth {
            return "\(label)  \(bar(width: room))  \(tail)"
        }
        return String(TerminalText.prefix("\(label)  \(tail)", columns: max(width, 0)))
    }

    /// How long a transfer has been stalled: `"12s"`, then as a clock from a minute on (`"1:05"`).
    static func quietTime(_ seconds: Int) -> String {
        seconds < 60 ? "\(seconds)s" : TransferFormat.eta(Double(seconds))
    }

    /// `[#####.....]` of `width` characters, brackets included.
    func bar(width: Int) -> String {
        let inner = max(width - 2, 0)
        let filled =
            totalBytes == 0 ? inner : Int(Double(inner) * Double(min(bytesDone, totalBytes)) / Double(totalBytes))
        return "[" + String(repeating: "#", count: filled) + String(repeating: ".", count: inner - filled) + "]"
    }

    /// `text` right-aligned in `width` characters (longer text is kept whole).
    static func padded(_ text: String, _ width: Int) -> String {
        String(repeating: " ", count: max(0, width - text.count)) + text
    }

    /// `text` cut or padded to exactly `width` terminal columns (a wide character counts 2,
    /// `TerminalText.width(of:)`); a cut is marked with "~".
    static func column(_ text: String, width: Int) -> String {
        var shown = text
        if TerminalText.width(of: text) > width {
            shown = TerminalText.prefix(text, columns: width - 1) + "~"
        }
        return shown + String(repeating: " ", count: max(0, width - TerminalText.width(of: shown)))
    }
}
