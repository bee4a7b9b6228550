import Glibc

/// A point in time on the monotonic clock, for waits that must end.
///
/// Why: `pthread_cond_timedwait` takes an absolute `timespec`; using CLOCK_MONOTONIC keeps
/// deadlines immune to wall-clock changes on CI machines.
struct Deadline: Sendable {
    /// Nanoseconds since an arbitrary monotonic origin.
    let nanoseconds: UInt64

    static var now: Deadline {
        var time = timespec()
        clock_gettime(CLOCK_MONOTONIC, &time)
        return Deadline(nanoseconds: UInt64(time.tv_sec) &* 1_000_000_000 &+ UInt64(time.tv_nsec))
    }

    /// The instant `duration` from now; negative durations mean now.
    static func after(_ duration: Duration) -> Deadline {
        let (seconds, attoseconds) = duration.components
        guard seconds >= 0, attoseconds >= 0 else { return now }
        let (scaled, overflow) = UInt64(seconds).multipliedReportingOverflow(by: 1_000_000_000)
        let delta = overflow ? UInt64.max / 2 : scaled + UInt64(attoseconds / 1_000_000_000)
        let (sum, sumOverflow) = now.nanoseconds.addingReportingOverflow(delta)
        return Deadline(nanoseconds: sumOverflow ? UInt64.max / 2 : sum)
    }

    var hasPassed: Bool { Deadline.now.nanoseconds >= nanoseconds }

    var timespecValue: timespec {
        timespec(tv_sec: Int(nanoseconds / 1_000_000_000), tv_nsec: Int(nanoseconds % 1_000_000_000))
    }
}
