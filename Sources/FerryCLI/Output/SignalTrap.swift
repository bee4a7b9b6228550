import Dispatch
import Synchronization

#if canImport(Glibc)
    import Glibc
#endif

/// Turns Ctrl-C into cancellation of the running command, and keeps SIGPIPE from killing the process.
///
/// A command that is interrupted should leave as a guest does: say goodbye to its peers, delete its staging
/// files, and exit 130. SIGINT's default action kills the process on the spot, so the real `ferry` process
/// replaces it: the first SIGINT calls `onInterrupt` (which cancels the command's task; commands clean up on
/// cancellation), a second one exits at once with 130 for a command that is stuck. SIGPIPE is ignored so that
/// a closed pipe or socket is an error to handle, never a silent death.
final class SignalTrap: Sendable {
    private let interrupts = Mutex<Int>(0)
    // Kept alive (and cancelled) by the trap; guarded only so that the class can be Sendable.
    private let source = Mutex<(any DispatchSourceSignal)?>(nil)

    private init() {}

    /// Ignores SIGPIPE and routes SIGINT to `onInterrupt` until `uninstall()`.
    static func install(onInterrupt: @escaping @Sendable () -> Void) -> SignalTrap {
        let trap = SignalTrap()
        ignoreBrokenPipes()
        // libdispatch sees the signal through its own handler; the default action must not run.
        signal(SIGINT, SIG_IGN)
        trap.source.withLock { stored in
            // Created inside the lock so that the (non-Sendable) source is never shared outside it.
            let source = DispatchSource.makeSignalSource(signal: SIGINT, queue: .global())
            source.setEventHandler { [trap] in
                let count = trap.interrupts.withLock { count in
                    count += 1
                    return count
                }
                if count == 1 {
                    onInterrupt()
                } else {
                    _exit(ExitCode.interrupted.rawValue)
                }
            }
            source.resume()
            stored = source
        }
        return trap
    }

    /// Makes writing to a closed pipe or socket fail with EPIPE instead of killing the process.
    static func ignoreBrokenPipes() {
        signal(SIGPIPE, SIG_IGN)
    }

    /// Whether at least one SIGINT arrived since `install`.
    var wasInterrupted: Bool {
        interrupts.withLock { $0 > 0 }
    }

    /// Stops routing SIGINT; its default action (terminate) applies again.
    func uninstall() {
        source.withLock { source in
            source?.cancel()
            source = nil
        }
        signal(SIGINT, SIG_DFL)
    }
}
