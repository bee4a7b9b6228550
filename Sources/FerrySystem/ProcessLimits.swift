import Glibc

/// Limits of the whole process, set once at start by the `ferry` executable.
public enum ProcessLimits {
    /// The soft limit on open descriptors `raiseOpenFileLimit()` asks for, at most (the hard limit permitting).
    public static let wantedOpenFiles: UInt64 = 65_536

    /// Raises the soft limit on open descriptors (`RLIMIT_NOFILE`) to the hard limit, at most `wantedOpenFiles`;
    /// never lowers it. Returns the soft limit in force afterwards (0 when it could not be read).
    ///
    /// Why: a receiver holds two descriptors for each staged file it creates ahead (32 per transfer: the lock's and
    /// the one written through), one per link, and the descriptors of the files being read and written; a service
    /// taking transfers from a dozen peers at once passes the usual soft limit of 1024, and then `accept` and every
    /// `open` fail with EMFILE. The hard limit is the administrator's; the soft one is only a default for programs
    /// that use `select(2)`, which ferry does not (epoll).
    @discardableResult
    public static func raiseOpenFileLimit() -> UInt64 {
        let resource = __rlimit_resource_t(RLIMIT_NOFILE.rawValue)
        var limit = rlimit()
        guard getrlimit(resource, &limit) == 0 else { return 0 }
        let wanted = min(UInt64(limit.rlim_max), wantedOpenFiles)
        guard UInt64(limit.rlim_cur) < wanted else { return UInt64(limit.rlim_cur) }
        var raised = limit
        raised.rlim_cur = rlim_t(wanted)
        return setrlimit(resource, &raised) == 0 ? wanted : UInt64(limit.rlim_cur)
    }
}
