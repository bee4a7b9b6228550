/// Rate and ETA of one transfer with one peer, and when the next progress event is due.
///
/// The rate is measured over a sliding window of recent samples (about `span`), so a stall shows as a falling
/// rate instead of being averaged away by the start of the transfer.
struct ProgressMeter: Sendable {
    private var samples: [(time: ContinuousClock.Instant, bytes: UInt64)] = []
    private var lastReport: ContinuousClock.Instant?
    let span: Duration
    let interval: Duration

    init(span: Duration = .seconds(3), interval: Duration) {
        self.span = span
        self.interval = interval
    }

    /// Records that `bytes` are done at `now`; true when a progress event is due.
    mutating func record(bytes: UInt64, now: ContinuousClock.Instant) -> Bool {
        samples.append((now, bytes))
        while samples.count > 2, let first = samples.first, now - first.time > span { samples.removeFirst() }
        guard let last = lastReport else {
            lastReport = now
            return true
        }
        guard now - last >= interval else { return false }
        lastReport = now
        return true
    }

    /// Bytes per second over the samples kept; 0 until two samples span some time.
    var rate: Double {
        guard let first = samples.first, let last = samples.last, last.time > first.time else { return 0 }
        let seconds = Self.seconds(last.time - first.time)
        return seconds > 0 ? Double(last.bytes &- first.bytes) / seconds : 0
    }

    func secondsLeft(remaining: UInt64) -> Double? {
        let rate = rate
        return rate > 0 ? Double(remaining) / rate : nil
    }

    static func seconds(_ duration: Duration) -> Double {
        let parts = duration.components
        return Double(parts.seconds) + Double(parts.attoseconds) / 1e18
    }
}
