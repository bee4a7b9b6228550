import Glibc
import Synchronization

/// Ignores SIGPIPE process-wide, once: a write to a closed socket must fail with EPIPE, never kill the process
/// (in addition to MSG_NOSIGNAL on every send).
private let sigpipeIgnored: Bool = {
    _ = signal(SIGPIPE, SIG_IGN)
    return true
}()

/// The one epoll reactor of the process: owns every descriptor, runs one thread, resumes async callers.
///
/// Why: libdispatch socket sources have open bugs on Linux, and a thread per socket does not scale to many
/// peers. One loop thread blocks in `epoll_wait`; tasks make their own non-blocking system calls and only
/// suspend (on a continuation the loop resumes) when a call would block. Every descriptor it hands out is
/// O_NONBLOCK | O_CLOEXEC, and `shutdown()` closes them all. Deadlines (sleeps, connect timeouts) live in the
/// same loop, as the `epoll_wait` timeout.
public final class Reactor: Sendable {
    let core: ReactorCore
    private let thread: Mutex<ReactorThread?>

    /// Creates the epoll selector and its eventfd and starts the loop thread. Ignores SIGPIPE (once per process).
    public init() throws {
        _ = sigpipeIgnored
        let core = try ReactorCore()
        do {
            thread = Mutex(try ReactorThread { core.run() })
        } catch {
            core.beginShutdown()
            core.closeSelector()
            throw error
        }
        self.core = core
    }

    deinit {
        shutdown()
    }

    /// Closes every registered descriptor, fails pending waiters (reads, accepts, sleeps...) with
    /// `ReactorError.reactorShutDown`, joins the loop thread and releases the selector. Idempotent; later
    /// operations throw `ReactorError.reactorShutDown`. Listeners, connections and sockets keep their reactor
    /// alive; it shuts down by itself when the last of them and the last `Reactor` reference are gone.
    public func shutdown() {
        core.beginShutdown()
        guard let thread = thread.withLock({ $0.take() }) else { return }
        thread.join()
        core.closeSelector()
    }

    /// Suspends until `deadline` (monotonic, `ContinuousClock`), driven by the loop's timer heap rather than
    /// `Task.sleep`. Returns at or after the deadline.
    /// - Throws: `CancellationError` if the task is cancelled, `ReactorError.reactorShutDown` on shutdown.
    public func sleep(until deadline: ContinuousClock.Instant) async throws {
        try await core.sleep(until: deadline)
    }

    /// For tests and diagnostics: the number of descriptors currently registered (listeners, connections,
    /// datagram sockets; not the reactor's own selector and eventfd).
    public var openDescriptorCount: Int { core.registeredCount }
}
