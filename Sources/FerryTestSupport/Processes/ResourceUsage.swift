import Glibc

/// CPU time and peak memory of an exited child, as `wait4` reported them when it was reaped.
///
/// Why: benchmarks compare the sender's CPU time across runs (broadcast to one peer or to four) and
/// check that memory stays bounded whatever the file size; the kernel's own accounting at exit is
/// exact and needs no polling while the child runs.
public struct ResourceUsage: Sendable, Equatable {
    /// CPU time spent in user mode (`ru_utime`).
    public var userTime: Duration
    /// CPU time spent in the kernel on the child's behalf (`ru_stime`).
    public var systemTime: Duration
    /// Peak resident set size in bytes (`ru_maxrss`, which Linux reports in KiB).
    public var peakResidentBytes: Int

    public init(userTime: Duration, systemTime: Duration, peakResidentBytes: Int) {
        self.userTime = userTime
        self.systemTime = systemTime
        self.peakResidentBytes = peakResidentBytes
    }

    /// User plus system time.
    public var cpuTime: Duration { userTime + systemTime }

    init(_ usage: rusage) {
        func duration(_ time: timeval) -> Duration {
            .seconds(Int64(time.tv_sec)) + .microseconds(Int64(time.tv_usec))
        }
        userTime = duration(usage.ru_utime)
        systemTime = duration(usage.ru_stime)
        peakResidentBytes = max(0, usage.ru_maxrss).multipliedReportingOverflow(by: 1024).partialValue
    }
}
