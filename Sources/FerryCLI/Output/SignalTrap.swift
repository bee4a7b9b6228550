import FerrySystem
import Synchronization

#if canImport(Glibc)
    import Glibc
#endif

/// Turns Ctrl-C (SIGINT) and SIGTERM into cancellation of the running command, and keeps SIGPIPE from killing the
/// process.
///
/// A command that is interrupted should leave as a guest does: say goodbye to its peers, keep what it staged for a
/// resume, and exit. The default actions of SIGINT and SIGTERM kill the process on the spot, so the real `ferry`
/// process replaces them: the first of either calls `onInterrupt` (which cancels the command's task; commands clean
/// up on cancellation), a second one exits at once for a command that is stuck. The exit status says which signal
/// stopped it: 130 for SIGINT, 143 for SIGTERM (128 + the signal, the shell's convention; a systemd unit lists 143
/// in `SuccessExitStatus=`). SIGTERM is how systemd, `kill` and container runtimes stop a service, so a receiver
/// left running ends as cleanly as one stopped by Ctrl-C. SIGPIPE is ignored so that a closed pipe or socket is an
/// error to handle, never a silent death.
///
/// The handler is installed with `sigaction` before `install` returns, and the command's task starts only after it
/// (`CommandRunner.execute`), so a signal that arrives as soon as the command has printed anything is never lost.
/// (Before, the task started first and the trap used libdispatch's signal sources, which need `SIG_IGN` set before
/// each source is registered: a SIGINT sent right after the command's first line could come while the handler was
/// not yet in place and be discarded; `InterruptTests` saw a receiver under load ignore the Ctrl-C sent right after
/// its "listening" line.) The handler only writes the signal's number to a pipe, which is async-signal-safe; a
/// thread of the trap's reads the pipe and does the rest.
final class SignalTrap: Sendable {
    /// The first signal that arrived since `install`, 0 before one did.
    private let first = Mutex<Int32>(0)
    private let count = Mutex<Int>(0)
    private let onInterrupt: @Sendable () -> Void

    /// Whether a SIGTERM stopped this process (read by the transfer session to tell peers "shutting down" rather
    /// than "cancelled by the user"); set once, never cleared.
    private static let terminated = Atomic<Bool>(false)
    /// The trap signals go to, nil between `uninstall` and the next `install`.
    private static let current = Mutex<SignalTrap?>(nil)
    /// The pipe the handler writes each signal's number to, and the thread that reads it: made once per process.
    private static let pipe = SignalPipe(unblocking: stopSignals) { number in
        current.withLock { $0 }?.received(number)
    }

    private init(onInterrupt: @escaping @Sendable () -> Void) {
        self.onInterrupt = onInterrupt
    }

    /// The signals that stop a command cleanly.
    static let stopSignals: [Int32] = [SIGINT, SIGTERM]

    /// Ignores SIGPIPE and routes SIGINT and SIGTERM to `onInterrupt` until `uninstall()`. When the pipe for the
    /// handler cannot be made (no descriptors left), the signals keep their default action: they end the process.
    static func install(onInterrupt: @escaping @Sendable () -> Void) -> SignalTrap {
        let trap = SignalTrap(onInterrupt: onInterrupt)
        ignoreBrokenPipes()
        current.withLock { $0 = trap }
        if let pipe {
            for number in stopSignals { pipe.route(number) }
        }
        return trap
    }

    private func received(_ number: Int32) {
        let seen = count.withLock { count in
            count += 1
            return count
        }
        let stoppedBy = first.withLock { first in
            if first == 0 { first = number }
            return first
        }
        if stoppedBy == SIGTERM {
            Self.terminated.store(true, ordering: .relaxed)
        }
        if seen == 1 {
            onInterrupt()
        } else {
            ChatTerminal.restore()  // a chat's terminal gets its echo back
            _exit(Self.exitCode(for: stoppedBy).rawValue)
        }
    }

    /// The exit status for a command stopped by `number`.
    static func exitCode(for number: Int32) -> ExitCode {
        number == SIGTERM ? .terminated : .interrupted
    }

    /// Makes writing to a closed pipe or socket fail with EPIPE instead of killing the process.
    static func ignoreBrokenPipes() {
        signal(SIGPIPE, SIG_IGN)
    }

    /// Whether this process was asked to stop by SIGTERM (a service manager), as opposed to a person's Ctrl-C.
    static var wasTerminated: Bool {
        terminated.load(ordering: .relaxed)
    }

    /// Whether at least one SIGINT or SIGTERM arrived since `install`.
    var wasInterrupted: Bool {
        first.withLock { $0 != 0 }
    }

    /// The exit status the signal that arrived asks for (130 or 143), nil when none arrived.
    var interruption: ExitCode? {
        first.withLock { $0 == 0 ? nil : Self.exitCode(for: $0) }
    }

    /// Stops routing SIGINT and SIGTERM; their default action (terminate) applies again.
    func uninstall() {
        for number in Self.stopSignals {
            signal(number, SIG_DFL)
        }
        Self.current.withLock { if $0 === self { $0 = nil } }
    }
}
