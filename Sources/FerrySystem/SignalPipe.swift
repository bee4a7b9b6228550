import CFerryLinux
import Glibc

/// Delivers signals to a closure on a thread of its own, through a pipe written by a C signal handler.
///
/// Why: a signal handler may only call async-signal-safe functions, so ferry's handler (CFerryLinux
/// `ferry_route_signal_to_pipe`) writes the signal's number to a pipe and returns; this thread reads it and calls
/// `deliver`, where locks, allocation and Swift are fine. Unlike libdispatch's signal sources, which need the signal
/// set to `SIG_IGN` before the source is registered (a signal that arrives in between is discarded), `route(_:)`
/// replaces the action in one `sigaction` call: from its return on, every such signal reaches `deliver`.
public final class SignalPipe: Sendable {
    private let thread: ReactorThread

    /// Makes the pipe and starts the reading thread, which unblocks `signals` for itself: a signal sent to the process
    /// goes to a thread that does not block it, and libdispatch's threads block nearly all, so this one is always
    /// there to take it (its `read` is restarted after the handler, and finds the byte). Nil when no pipe or thread
    /// can be made. One per process: the C handler writes to the pipe made last.
    public init?(unblocking signals: [Int32], deliver: @escaping @Sendable (Int32) -> Void) {
        var ends: [Int32] = [-1, -1]
        guard ferry_pipe2(&ends, O_CLOEXEC) == 0 else { return nil }
        let (readEnd, writeEnd) = (ends[0], ends[1])
        do {
            thread = try ReactorThread {
                var routed = sigset_t()
                sigemptyset(&routed)
                for number in signals { sigaddset(&routed, number) }
                pthread_sigmask(SIG_UNBLOCK, &routed, nil)
                var byte: UInt8 = 0
                while true {
                    let count = read(readEnd, &byte, 1)
                    if count == 1 {
                        deliver(Int32(byte))
                    } else if count < 0 && errno == EINTR {
                        continue
                    } else {
                        return  // the write end is never closed: not reached
                    }
                }
            }
        } catch {
            close(readEnd)
            close(writeEnd)
            return nil
        }
        ferry_signal_pipe_set(writeEnd)
    }

    /// Routes `signal` to `deliver` from now on (`sigaction`, SA_RESTART). False when sigaction refused it.
    @discardableResult
    public func route(_ signal: Int32) -> Bool {
        ferry_route_signal_to_pipe(signal) == 0
    }
}
