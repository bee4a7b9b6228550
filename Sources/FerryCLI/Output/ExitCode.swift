/// The status a `ferry` process exits with.
///
/// Scripts branch on these, so they are few and fixed: 0 when the command did its job, 1 when it failed at run
/// time (a peer, the network or the file system said no), 64 when the command line itself was wrong (`EX_USAGE`
/// from sysexits.h, as swift-argument-parser uses), 130 when the user interrupted it with Ctrl-C (128 + SIGINT,
/// the shell convention), and 143 when SIGTERM stopped it (128 + SIGTERM: `kill`, or systemd stopping a service).
public struct ExitCode: RawRepresentable, Hashable, Sendable, CustomStringConvertible {
    /// The value passed to `exit(3)`.
    public var rawValue: Int32

    /// Any status, as `RawRepresentable` requires; the named constants cover what ferry returns.
    public init(rawValue: Int32) {
        self.rawValue = rawValue
    }

    /// Any status, unlabelled: `ExitCode(2)`.
    public init(_ rawValue: Int32) {
        self.rawValue = rawValue
    }

    /// The command did its job.
    public static let success = ExitCode(0)
    /// The command failed at run time.
    public static let failure = ExitCode(1)
    /// The command line was wrong: unknown option, missing or bad value, unexpected argument.
    public static let usage = ExitCode(64)
    /// The command was interrupted by SIGINT (Ctrl-C).
    public static let interrupted = ExitCode(130)
    /// The command was stopped by SIGTERM (`kill PID`, `systemctl stop`), and cleaned up as for Ctrl-C.
    public static let terminated = ExitCode(143)

    /// The number, as a shell prints `$?`.
    public var description: String {
        String(rawValue)
    }
}
