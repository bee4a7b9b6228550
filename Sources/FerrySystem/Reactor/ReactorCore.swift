import CFerryLinux
import Glibc
import Synchronization

/// The state and loop behind `Reactor`: the epoll selector, the wake-up eventfd, the registered descriptors
/// and the timer heap.
///
/// Why apart from `Reactor`: the loop thread and every registration hold the core; the public `Reactor` is the
/// handle users hold, so dropping it can shut everything down. The loop's `epoll_wait` is the only blocking call
/// of the process's networking; readiness only resumes continuations (tasks then retry their own non-blocking
/// calls on their executor), so no user code runs on the loop thread.
final class ReactorCore: Sendable {
    /// epoll user data of the wake-up eventfd.
    private static let wakeUpID: UInt64 = 0
    private static let maximumEvents = 256

    private struct State {
        var isShutDown = false
        var nextID: UInt64 = 1
        var registrations: [UInt64: Registration] = [:]
        var timers = TimerQueue()
        /// True while the loop is (about to be) blocked in epoll_wait until `pollDeadline` (nil: no deadline).
        var isPolling = false
        var pollDeadline: ContinuousClock.Instant?
    }

    /// The epoll descriptor.
    let selector: FileDescriptor
    private let wakeUpEvent: FileDescriptor
    private let state = Mutex(State())

    /// Creates the epoll selector and the eventfd that interrupts it.
    init() throws {
        selector = try FileDescriptor.epollCreate()
        do {
            wakeUpEvent = try FileDescriptor.eventFD()
        } catch {
            selector.close()
            throw error
        }
        let added = selector._epollControl(EPOLL_CTL_ADD, wakeUpEvent, events: FERRY_EPOLLIN, id: Self.wakeUpID)
        if case .failure(let errno) = added {
            wakeUpEvent.close()
            selector.close()
            throw SystemError(call: "epoll_ctl()", errno: errno)
        }
    }

    /// Takes ownership of `descriptor` (closing it on failure) and adds it to epoll, disarmed.
    func register(_ descriptor: FileDescriptor) throws -> Registration {
        let result = state.withLock { state -> Result<Registration, any Error> in
            guard !state.isShutDown else { return .failure(ReactorError.reactorShutDown) }
            let id = state.nextID
            state.nextID += 1
            let added = selector._epollControl(EPOLL_CTL_ADD, descriptor, events: FERRY_EPOLLONESHOT, id: id)
            if case .failure(let errno) = added { return .failure(SystemError(call: "epoll_ctl()", errno: errno)) }
            let registration = Registration(id: id, descriptor: descriptor, core: self)
            state.registrations[id] = registration
            return .success(registration)
        }
        if case .failure = result { descriptor.close() }
        return try result.get()
    }

    /// Forgets a closed registration.
    func unregister(_ id: UInt64) {
        _ = state.withLock { $0.registrations.removeValue(forKey: id) }
    }

    /// Number of registered descriptors.
    var registeredCount: Int { state.withLock { $0.registrations.count } }

    /// For tests: number of pending timers (sleeps, deadlines).
    var pendingTimerCount: Int { state.withLock { $0.timers.count } }

    /// Adds a timer whose `action` runs on the loop thread at `deadline` (or with an error at shutdown).
    /// After shutdown, `action` runs at once with `ReactorError.reactorShutDown`. Returns the timer's ID.
    func addTimer(deadline: ContinuousClock.Instant, action: @escaping TimerAction) -> UInt64 {
        let id = allocateID()
        if let rejection = insertTimer(id: id, deadline: deadline, failIfCancelled: false, action: action) {
            action(rejection)
        }
        return id
    }

    /// Removes a timer that has not ended yet and returns its action, without running it.
    func removeTimer(_ id: UInt64) -> TimerAction? {
        state.withLock { $0.timers.remove(id: id) }
    }

    /// Suspends until `deadline`; see `Reactor.sleep(until:)`.
    func sleep(until deadline: ContinuousClock.Instant) async throws {
        let id = allocateID()
        try await withTaskCancellationHandler {
            try await withCheckedThrowingContinuation { (continuation: CheckedContinuation<Void, any Error>) in
                let action: TimerAction = { error in
                    if let error { continuation.resume(throwing: error) } else { continuation.resume() }
                }
                if let rejection = insertTimer(id: id, deadline: deadline, failIfCancelled: true, action: action) {
                    continuation.resume(throwing: rejection)
                }
            }
        } onCancel: {
            removeTimer(id)?(CancellationError())
        }
    }

    private func allocateID() -> UInt64 {
        state.withLock { state in
            defer { state.nextID += 1 }
            return state.nextID
        }
    }

    /// Inserts a timer unless the reactor is shut down (or, with `failIfCancelled`, the current task is
    /// cancelled: checked under the lock so that a concurrent cancellation handler either sees the timer or
    /// the timer is never added). Returns the rejection instead of running `action`.
    private func insertTimer(
        id: UInt64, deadline: ContinuousClock.Instant, failIfCancelled: Bool, action: @escaping TimerAction
    ) -> (any Error)? {
        let outcome = state.withLock { state -> (rejection: (any Error)?, wake: Bool) in
            if state.isShutDown { return (ReactorError.reactorShutDown, false) }
            if failIfCancelled && Task.isCancelled { return (CancellationError(), false) }
            state.timers.insert(id: id, deadline: deadline, action: action)
            guard state.isPolling, state.pollDeadline.map({ deadline < $0 }) ?? true else { return (nil, false) }
            state.pollDeadline = deadline
            return (nil, true)
        }
        if outcome.wake { wakeUp() }
        return outcome.rejection
    }

    /// Interrupts `epoll_wait` (`write(2)` to the eventfd).
    private func wakeUp() {
        var one: UInt64 = 1
        _ = withUnsafeBytes(of: &one) { wakeUpEvent._write($0) }
    }

    /// The loop: waits for readiness or the earliest deadline, resumes waiters, runs expired timers; returns
    /// after `beginShutdown()`.
    func run() {
        let events = UnsafeMutableBufferPointer<epoll_event>.allocate(capacity: Self.maximumEvents)
        defer { events.deallocate() }
        while true {
            let timeout = state.withLock { state -> Int32? in
                if state.isShutDown { return nil }
                let deadline = state.timers.earliestDeadline()
                state.isPolling = true
                state.pollDeadline = deadline
                return deadline.map(Self.milliseconds(until:)) ?? -1
            }
            guard let timeout else { return }
            let count: Int
            switch selector._epollWait(events, timeout: timeout) {
            case .success(let value): count = value
            case .failure(let errno): fatalError("epoll_wait(): \(errno)")  // EBADF/EINVAL: a bug in this file
            }
            let now = ContinuousClock.now
            var wokenUp = false
            let (ready, expired) = state.withLock { state in
                state.isPolling = false
                var ready: [(Registration, UInt32)] = []
                for index in 0..<count {
                    let id = events[index].data.u64
                    if id == Self.wakeUpID {
                        wokenUp = true
                    } else if let registration = state.registrations[id] {
                        ready.append((registration, events[index].events))
                    }
                }
                return (ready, state.timers.popExpired(now: now))
            }
            if wokenUp {
                var counter: UInt64 = 0
                _ = withUnsafeMutableBytes(of: &counter) { wakeUpEvent._read(into: $0) }
            }
            for (registration, events) in ready { registration.handle(events: events) }
            for action in expired { action(nil) }
        }
    }

    /// The `epoll_wait` timeout for `deadline`, rounded up to whole milliseconds (so the loop never wakes before
    /// it) and capped at one hour.
    private static func milliseconds(until deadline: ContinuousClock.Instant) -> Int32 {
        let remaining = deadline - ContinuousClock.now
        guard remaining > .zero else { return 0 }
        let (seconds, attoseconds) = remaining.components
        guard seconds < 3600 else { return 3_600_000 }
        let attosecondsPerMillisecond: Int64 = 1_000_000_000_000_000
        let milliseconds = seconds * 1000 + (attoseconds + attosecondsPerMillisecond - 1) / attosecondsPerMillisecond
        return Int32(milliseconds)
    }

    /// Marks the reactor shut down, closes every registered descriptor (failing its waiters with
    /// `ReactorError.reactorShutDown`), ends every timer the same way and wakes the loop so that it returns.
    /// Returns false if shutdown had already begun.
    @discardableResult
    func beginShutdown() -> Bool {
        let taken = state.withLock { state -> ([Registration], [TimerAction])? in
            guard !state.isShutDown else { return nil }
            state.isShutDown = true
            let registrations = Array(state.registrations.values)
            state.registrations.removeAll()
            return (registrations, state.timers.removeAll())
        }
        guard let (registrations, timers) = taken else { return false }
        for registration in registrations { registration.close(reason: .reactorShutDown) }
        for action in timers { action(ReactorError.reactorShutDown) }
        wakeUp()
        return true
    }

    /// Closes the selector and the eventfd; only after the loop thread has returned.
    func closeSelector() {
        wakeUpEvent.close()
        selector.close()
    }
}
