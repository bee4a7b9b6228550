import Dispatch
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
final class SignalTrap: Sendable {
    /// The first signal that arrived since `install`, 0 before one did.
    private let first = Mutex<Int32>(0)
    private let count = Mutex<Int>(0)
    // Kept alive (and cancelled) by the trap; guarded only so that the class can be Sendable.
    private let sources = Mutex<[any DispatchSourceSignal]>([])

    /// Whether a SIGTERM stopped this process (read by the transfer session to tell peers "shutting down" rather
    /// than "cancelled by the user"); set once, never cleared.
    private static let terminated = Atomic<Bool>(false)

    private init() {}

    /// The signals that stop a command cleanly.
    static let stopSignals: [Int32] = [SIGINT, SIGTERM]

    /// Ignores SIGPIPE and routes SIGINT and SIGTERM to `onInterrupt` until `uninstall()`.
    static func install(onInterrupt: @escaping @Sendable () -> Void) -> SignalTrap {
        let trap = SignalTrap()
        ignoreBrokenPipes()
        trap.sources.withLock { stored in
            for number in stopSignals {
                // libdispatch sees the signal through its own handler; the default action must not run.
                signal(number, SIG_IGN)
                // Created inside the lock so that the (non-Sendable) source is never shared outside it.
                let source = DispatchSource.makeSignalSource(signal: number, queue: .global())
                source.setEventHandler { [trap] in
                    trap.received(number, onInterrupt: onInterrupt)
                }
                source.resume()
                stored.append(source)
            }
        }
        return trap
    }

    private func received(_ number: Int32, onInterrupt: @Sendable () -> Void) {
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
        sources.withLock { sources in
            for source in sources { source.cancel() }
            sources = []
        }
        for number in Self.stopSignals {
            signal(number, SIG_DFL)
        }
    }
}
