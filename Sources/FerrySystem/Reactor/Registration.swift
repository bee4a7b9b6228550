import CFerryLinux
import Glibc
import Synchronization

/// One descriptor owned by the reactor: the tasks waiting for it to become readable or writable, and its
/// lifetime.
///
/// Why: every transport (listener, connection, datagram socket) needs the same three things done right:
/// a waiter that is resumed exactly once (by readiness, close, deadline, cancellation or shutdown),
/// EPOLLONESHOT re-arming without lost wake-ups, and a close that cannot race a system call in flight on
/// another thread (the descriptor number is only released when no call is using it).
/// Lock order: a registration's lock is never held while taking the reactor core's lock, and vice versa.
final class Registration: Sendable {
    /// Which readiness a waiter needs.
    enum Direction: Sendable {
        case read
        case write
        /// Readiness is never awaited: only close, the deadline, cancellation or shutdown end the wait (a
        /// back-off that `close()` can still interrupt).
        case closeOrDeadline
    }

    private enum Phase {
        /// Registered (so that close, deadline or cancellation can reach it) but not yet suspended.
        case allocated
        /// Suspended; resumed exactly once by whoever removes it.
        case waiting(CheckedContinuation<Void, any Error>)
        /// Ended before it suspended; the waiter throws this when it gets there.
        case failed(any Error)
    }

    private struct Waiter {
        var direction: Direction
        var phase: Phase
    }

    private struct State {
        var closeReason: ReactorError?
        var callsInFlight = 0
        var descriptorClosed = false
        var nextWaiterID: UInt64 = 0
        var waiters: [UInt64: Waiter] = [:]
        /// The interest armed in epoll; 0 once an EPOLLONESHOT event has disarmed it.
        var armedEvents: UInt32 = 0
    }

    /// The reactor's key for this descriptor (epoll user data); never reused.
    let id: UInt64
    private let descriptor: FileDescriptor
    private let core: ReactorCore
    private let state = Mutex(State())

    init(id: UInt64, descriptor: FileDescriptor, core: ReactorCore) {
        self.id = id
        self.descriptor = descriptor
        self.core = core
    }

    /// Runs a (non-blocking) system call on the descriptor, keeping the descriptor number alive meanwhile.
    /// - Throws: the close reason (`ReactorError.closed` / `.reactorShutDown`) if already closed, or `body`'s error.
    func withDescriptor<Value>(_ body: (FileDescriptor) throws -> Value) throws -> Value {
        try state.withLock { state throws(ReactorError) in
            if let reason = state.closeReason { throw reason }
            state.callsInFlight += 1
        }
        defer {
            let closeNow = state.withLock { state in
                state.callsInFlight -= 1
                guard state.closeReason != nil, state.callsInFlight == 0, !state.descriptorClosed else { return false }
                state.descriptorClosed = true
                return true
            }
            if closeNow { descriptor.close() }
        }
        return try body(descriptor)
    }

    /// Suspends until the descriptor is ready for `direction` (then the caller retries its call).
    /// - Throws: the close reason, `ReactorError.timedOut` after `deadline`, `CancellationError`, or a
    ///   `SystemError` from `epoll_ctl`.
    func waitUntilReady(for direction: Direction, deadline: ContinuousClock.Instant? = nil) async throws {
        let waiterID = try state.withLock { state throws(ReactorError) -> UInt64 in
            if let reason = state.closeReason { throw reason }
            let waiterID = state.nextWaiterID
            state.nextWaiterID &+= 1
            state.waiters[waiterID] = Waiter(direction: direction, phase: .allocated)
            return waiterID
        }
        var timerID: UInt64?
        if let deadline {
            timerID = core.addTimer(deadline: deadline) { error in
                if error == nil { self.fail(waiterID, with: ReactorError.timedOut) }
            }
        }
        defer {
            if let timerID { _ = core.removeTimer(timerID) }
        }
        try await withTaskCancellationHandler {
            try await withCheckedThrowingContinuation { (continuation: CheckedContinuation<Void, any Error>) in
                let failure = state.withLock { state -> (any Error)? in
                    guard var waiter = state.waiters[waiterID] else { return ReactorError.closed }
                    switch waiter.phase {
                    case .failed(let error):
                        state.waiters[waiterID] = nil
                        return error
                    case .waiting:
                        preconditionFailure("waiter suspended twice")
                    case .allocated:
                        waiter.phase = .waiting(continuation)
                        state.waiters[waiterID] = waiter
                        if let error = arm(&state) {
                            state.waiters[waiterID] = nil
                            return error
                        }
                        return nil
                    }
                }
                if let failure { continuation.resume(throwing: failure) }
            }
        } onCancel: {
            fail(waiterID, with: CancellationError())
        }
    }

    /// Ends one waiter early with `error` (deadline, cancellation); nothing if it already ended.
    private func fail(_ waiterID: UInt64, with error: any Error) {
        let continuation = state.withLock { state -> CheckedContinuation<Void, any Error>? in
            guard var waiter = state.waiters[waiterID] else { return nil }
            switch waiter.phase {
            case .allocated:
                waiter.phase = .failed(error)
                state.waiters[waiterID] = waiter
                return nil
            case .failed:
                return nil
            case .waiting(let continuation):
                state.waiters[waiterID] = nil
                return continuation
            }
        }
        continuation?.resume(throwing: error)
    }

    /// Arms epoll (EPOLLONESHOT) for the directions suspended waiters need. Returns an error instead of throwing
    /// so that callers can decide whom to fail.
    private func arm(_ state: inout State) -> (any Error)? {
        var interest: UInt32 = 0
        for waiter in state.waiters.values {
            guard case .waiting = waiter.phase else { continue }
            switch waiter.direction {
            case .read: interest |= FERRY_EPOLLIN
            case .write: interest |= FERRY_EPOLLOUT
            case .closeOrDeadline: break
            }
        }
        guard interest != 0, interest & ~state.armedEvents != 0 else { return nil }
        let events = interest | state.armedEvents
        switch core.selector._epollControl(EPOLL_CTL_MOD, descriptor, events: events | FERRY_EPOLLONESHOT, id: id) {
        case .success:
            state.armedEvents = events
            return nil
        case .failure(let errno):
            return SystemError(call: "epoll_ctl()", errno: errno)
        }
    }

    /// Called by the reactor thread with the events epoll reported: resumes the matching waiters and re-arms for
    /// the others.
    func handle(events: UInt32) {
        let errorOrHangUp = events & (FERRY_EPOLLERR | FERRY_EPOLLHUP) != 0
        let readable = errorOrHangUp || events & (FERRY_EPOLLIN | FERRY_EPOLLRDHUP) != 0
        let writable = errorOrHangUp || events & FERRY_EPOLLOUT != 0
        let (ready, failed) = state.withLock { state in
            state.armedEvents = 0
            var ready: [CheckedContinuation<Void, any Error>] = []
            for (waiterID, waiter) in state.waiters {
                guard case .waiting(let continuation) = waiter.phase else { continue }
                switch waiter.direction {
                case .read: guard readable else { continue }
                case .write: guard writable else { continue }
                case .closeOrDeadline: continue
                }
                state.waiters[waiterID] = nil
                ready.append(continuation)
            }
            var failed: [CheckedContinuation<Void, any Error>] = []
            if state.closeReason == nil, let error = arm(&state) {
                for (waiterID, waiter) in state.waiters {
                    guard case .waiting(let continuation) = waiter.phase else { continue }
                    state.waiters[waiterID] = nil
                    failed.append(continuation)
                }
                return (ready, failed.map { ($0, error) })
            }
            return (ready, [])
        }
        for continuation in ready { continuation.resume() }
        for (continuation, error) in failed { continuation.resume(throwing: error) }
    }

    /// Closes the descriptor (once no system call is using it), removes it from epoll and the reactor, and fails
    /// every waiter with `reason`. Idempotent: returns false if it was already closed.
    @discardableResult
    func close(reason: ReactorError) -> Bool {
        let outcome = state.withLock { state -> (waiters: [CheckedContinuation<Void, any Error>], closeNow: Bool)? in
            guard state.closeReason == nil else { return nil }
            state.closeReason = reason
            _ = core.selector._epollControl(EPOLL_CTL_DEL, descriptor, events: 0, id: id)
            var waiters: [CheckedContinuation<Void, any Error>] = []
            for (waiterID, waiter) in state.waiters {
                switch waiter.phase {
                case .allocated:
                    state.waiters[waiterID] = Waiter(direction: waiter.direction, phase: .failed(reason))
                case .failed:
                    break
                case .waiting(let continuation):
                    state.waiters[waiterID] = nil
                    waiters.append(continuation)
                }
            }
            let closeNow = state.callsInFlight == 0
            if closeNow { state.descriptorClosed = true }
            return (waiters, closeNow)
        }
        guard let outcome else { return false }
        if outcome.closeNow { descriptor.close() }
        core.unregister(id)
        for continuation in outcome.waiters { continuation.resume(throwing: reason) }
        return true
    }

    /// Why the descriptor was closed, or nil while it is open.
    var closeReason: ReactorError? { state.withLock { $0.closeReason } }

    /// For tests: how many waiters are suspended.
    var suspendedWaiterCount: Int {
        state.withLock { state in
            state.waiters.values.count { if case .waiting = $0.phase { true } else { false } }
        }
    }
}
