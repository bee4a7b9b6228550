import FerrySystem
import Testing

@testable import FerryCLI

/// Sizes, rates, times and ratios as people read them.
@Suite struct TransferFormatTests {
    @Test(arguments: [
        (UInt64(0), "0 B"), (1, "1 B"), (1023, "1023 B"), (1024, "1.0 KiB"), (1536, "1.5 KiB"),
        (102_297, "99.9 KiB"), (102_349, "100 KiB"), (102_400, "100 KiB"), (1_048_575, "1.0 MiB"),
        (10 << 20, "10.0 MiB"),
        (5 << 30, "5.0 GiB"), (1 << 50, "1.0 PiB"), (UInt64.max, "16.0 EiB"),
    ])
    func bytes(count: UInt64, text: String) {
        #expect(TransferFormat.bytes(count) == text)
    }

    @Test func rates() {
        #expect(TransferFormat.rate(0) == "-- B/s")
        #expect(TransferFormat.rate(-5) == "-- B/s")
        #expect(TransferFormat.rate(.nan) == "-- B/s")
        #expect(TransferFormat.rate(.infinity) == "-- B/s")
        #expect(TransferFormat.rate(1) == "1 B/s")
        #expect(TransferFormat.rate(1536.7) == "1.5 KiB/s")
        #expect(TransferFormat.rate(118_000_000) == "113 MiB/s")
        #expect(TransferFormat.rate(1e30) == "16.0 EiB/s")
    }

    @Test func etas() {
        #expect(TransferFormat.eta(nil) == "--:--")
        #expect(TransferFormat.eta(-1) == "--:--")
        #expect(TransferFormat.eta(.infinity) == "--:--")
        #expect(TransferFormat.eta(0) == "0:00")
        #expect(TransferFormat.eta(7.2) == "0:08")
        #expect(TransferFormat.eta(61) == "1:01")
        #expect(TransferFormat.eta(599) == "9:59")
        #expect(TransferFormat.eta(3599.5) == "1:00:00")
        #expect(TransferFormat.eta(3725) == "1:02:05")
        #expect(TransferFormat.eta(359_999) == "99:59:59")
        #expect(TransferFormat.eta(360_000) == ">99:59:59")
    }

    @Test func durations() {
        #expect(TransferFormat.duration(0) == "under 0.1 s")
        #expect(TransferFormat.duration(0.049) == "under 0.1 s")
        #expect(TransferFormat.duration(0.44) == "0.4 s")
        #expect(TransferFormat.duration(12.34) == "12.3 s")
        #expect(TransferFormat.duration(59.96) == "1:00")
        #expect(TransferFormat.duration(65.2) == "1:05")
        #expect(TransferFormat.duration(3725) == "1:02:05")
        #expect(TransferFormat.duration(.nan) == "0.0 s")
        #expect(TransferFormat.seconds(.milliseconds(1500)) == 1.5)
    }

    @Test func ratios() {
        #expect(TransferFormat.ratio(1) == "1.00x")
        #expect(TransferFormat.ratio(3.4167) == "3.42x")
        #expect(TransferFormat.ratio(1.05) == "1.05x")
        #expect(TransferFormat.ratio(0) == "1.00x")
        #expect(TransferFormat.ratio(.nan) == "1.00x")
    }
}

/// The progress bar line: exact text for a given state and width.
@Suite struct ProgressLineTests {
    static let half = ProgressLine(
        name: "alice", bytesDone: 5 << 20, totalBytes: 10 << 20, rate: 1_572_864, secondsLeft: 3.33)

    @Test func fullWidth() {
        #expect(
            Self.half.render(width: 80)
                == "alice             [#######.......]   50%   5.0 MiB/10.0 MiB   1.5 MiB/s     0:04")
        #expect(Self.half.render(width: 80).count == 80)
        #expect(
            Self.half.render(width: 71)
                == "alice             [##...]   50%   5.0 MiB/10.0 MiB   1.5 MiB/s     0:04")
    }

    @Test func narrowTerminalsDropTheBarThenDetails() {
        #expect(Self.half.render(width: 70) == "alice              50%   5.0 MiB/10.0 MiB   1.5 MiB/s     0:04")
        #expect(Self.half.render(width: 61) == "alice              50%   5.0 MiB/10.0 MiB   1.5 MiB/s")
        #expect(Self.half.render(width: 50) == "alice              50%   5.0 MiB/10.0 MiB")
        #expect(Self.half.render(width: 30) == "alice              50%")
        #expect(Self.half.render(width: 12) == "alice    50%")
        #expect(Self.half.render(width: 3).count <= 3)
    }

    @Test func startAndEnd() {
        let start = ProgressLine(name: "bob", bytesDone: 0, totalBytes: 1000, rate: 0, secondsLeft: nil)
        #expect(
            start.render(width: 70) == "bob               [......]    0%       0 B/1000 B      -- B/s    --:--")
        let done = ProgressLine(name: "bob", bytesDone: 1000, totalBytes: 1000, rate: 500, secondsLeft: 0)
        #expect(
            done.render(width: 70) == "bob               [######]  100%    1000 B/1000 B     500 B/s     0:00")
        let empty = ProgressLine(name: "bob", bytesDone: 0, totalBytes: 0, rate: 0, secondsLeft: nil)
        #expect(empty.percent == 100)
        #expect(empty.bar(width: 6) == "[####]")
        let over = ProgressLine(name: "bob", bytesDone: 2000, totalBytes: 1000, rate: 0, secondsLeft: nil)
        #expect(over.percent == 100)
        #expect(over.bar(width: 6) == "[####]")
        #expect(ProgressLine(name: "b", bytesDone: 999, totalBytes: 1000, rate: 0, secondsLeft: nil).percent == 99)
    }

    /// Issue 9, 6: a bar frozen for 10 s said nothing; rate and time left describe the past.
    @Test func aStalledLineSaysForHowLong() {
        var stalled = Self.half
        stalled.stalledSeconds = 12
        #expect(
            stalled.render(width: 80)
                == "alice             [#######.......]   50%   5.0 MiB/10.0 MiB          stalled 12s")
        stalled.stalledSeconds = 75
        #expect(stalled.render(width: 80).hasSuffix("   stalled 1:15"))
        // The bar keeps its place whether or not the line is stalled.
        #expect(stalled.render(width: 80).count == Self.half.render(width: 80).count)
        let start = ContinuousClock.now
        #expect(Self.half.stalled(since: start, now: start + .milliseconds(4999)).stalledSeconds == nil)
        #expect(Self.half.stalled(since: start, now: start + .seconds(5)).stalledSeconds == 5)
        #expect(Self.half.stalled(since: start, now: start + .milliseconds(10_900)).stalledSeconds == 10)
    }

    @Test func longAndHostileNames() {
        let long = ProgressLine(
            name: "a-very-long-peer-name", bytesDone: 1, totalBytes: 4, rate: 0, secondsLeft: nil)
        #expect(long.render(width: 30) == "a-very-long-pee~   25%")
        let hostile = ProgressLine(name: "x\u{1B}[2J\u{202E}", bytesDone: 1, totalBytes: 4, rate: 0, secondsLeft: nil)
        #expect(hostile.render(width: 30) == "x\\u{1B}[2J\\u{20~   25%")
        #expect(!hostile.render(width: 80).unicodeScalars.contains { TerminalText.needsEscape($0) })
    }
}
