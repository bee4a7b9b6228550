/// How transfer quantities read on a terminal: sizes, rates, durations and ETAs.
///
/// Progress bars, per-file lines and summaries all show the same quantities; one formatter keeps them alike and
/// lets tests pin the exact text. Sizes use binary units (KiB = 1024 bytes), as `ls -h` and `du -h` do, with one
/// decimal below 100 and none above, so a number never takes more than 5 characters.
public enum TransferFormat {
    private static let units = ["KiB", "MiB", "GiB", "TiB", "PiB", "EiB"]

    /// `"0 B"`, `"1023 B"`, `"1.0 KiB"`, `"12.3 MiB"`, `"512 GiB"`.
    public static func bytes(_ count: UInt64) -> String {
        guard count >= 1024 else {
            return "\(count) B"
        }
        var value = Double(count)
        var unit = -1
        // Divide until the number shown (after rounding) is below 1024: 1048575 bytes is "1.0 MiB", not "1024 KiB".
        while (value * 10).rounded() >= 10240, unit < units.count - 1 {
            value /= 1024
            unit += 1
        }
        return "\(number(value)) \(units[unit])"
    }

    /// `"4.5 MiB/s"`; `"-- B/s"` while the rate is unknown (0, negative or not finite).
    public static func rate(_ bytesPerSecond: Double) -> String {
        guard bytesPerSecond.isFinite, bytesPerSecond >= 1 else {
            return "-- B/s"
        }
        return bytes(bytesPerSecond >= 1.8e19 ? UInt64.max : UInt64(bytesPerSecond)) + "/s"
    }

    /// A time left as a clock shows it: `"0:07"`, `"12:34"`, `"1:02:03"`; `"--:--"` when unknown, `">99:59:59"`
    /// beyond that.
    public static func eta(_ seconds: Double?) -> String {
        guard let seconds, seconds.isFinite, seconds >= 0 else {
            return "--:--"
        }
        guard seconds < 360_000 else {
            return ">99:59:59"
        }
        let total = Int(seconds.rounded(.up))
        let (hours, minutes, rest) = (total / 3600, total / 60 % 60, total % 60)
        let paddedSeconds = rest < 10 ? "0\(rest)" : "\(rest)"
        if hours > 0 {
            let paddedMinutes = minutes < 10 ? "0\(minutes)" : "\(minutes)"
            return "\(hours):\(paddedMinutes):\(paddedSeconds)"
        }
        return "\(minutes):\(paddedSeconds)"
    }

    /// An elapsed time for summaries: `"under 0.1 s"` (what rounds to 0.0), `"0.4 s"`, `"12.3 s"`, then as `eta`
    /// does from a minute on (`"1:05"`).
    public static func duration(_ seconds: Double) -> String {
        guard seconds.isFinite, seconds >= 0 else {
            return "0.0 s"
        }
        if seconds < 60 {
            let tenths = Int((seconds * 10).rounded())
            if tenths == 0 { return "under 0.1 s" }
            return tenths >= 600 ? "1:00" : "\(tenths / 10).\(tenths % 10) s"
        }
        return eta(seconds.rounded())
    }

    /// Whether `duration(seconds)` shows a time a rate can be told from: not one that rounds to 0.0 s (a rate from
    /// it, `202 MiB/s` after 4 ms, says more than anyone measured).
    static func isMeasurable(_ seconds: Double) -> Bool {
        seconds.isFinite && (seconds * 10).rounded() >= 1
    }

    /// A compression ratio: `"1.00x"`, `"3.42x"`.
    public static func ratio(_ value: Double) -> String {
        guard value.isFinite, value > 0 else {
            return "1.00x"
        }
        let hundredths = Int((min(value, 1e9) * 100).rounded())
        let fraction = hundredths % 100
        return "\(hundredths / 100).\(fraction < 10 ? "0" : "")\(fraction)x"
    }

    /// How many times the files' size a link carried: `"1.1x"`, `"16.0x"`; `"0.0x"` when unknown.
    public static func copies(_ value: Double) -> String {
        let tenths = value.isFinite && value > 0 ? Int((min(value, 1e9) * 10).rounded()) : 0
        return "\(tenths / 10).\(tenths % 10)x"
    }

    /// A size's number: one decimal below 100, none from 100 on.
    private static func number(_ value: Double) -> String {
        let tenths = Int((value * 10).rounded())
        if tenths < 1000 {
            return "\(tenths / 10).\(tenths % 10)"
        }
        return String(Int(value.rounded()))
    }

    /// Seconds in a `Duration`, as a `Double`.
    static func seconds(_ duration: Duration) -> Double {
        let parts = duration.components
        return Double(parts.seconds) + Double(parts.attoseconds) / 1e18
    }
}
