import Glibc

/// A value guarded by a mutex, with a condition variable to wait until the value is ready.
///
/// Why: the helpers wait for output lines, process exits and proxy state with deadlines.
/// `Mutex` cannot wait and polling sleeps are not allowed, so this pairs a pthread mutex with a
/// condition variable on CLOCK_MONOTONIC. Every `withLock` wakes all waiters afterwards.
final class Monitor<State: Sendable>: @unchecked Sendable {
    // @unchecked: `state` is only read or written while `mutex` is held.
    private let mutex = UnsafeMutablePointer<pthread_mutex_t>.allocate(capacity: 1)
    private let condition = UnsafeMutablePointer<pthread_cond_t>.allocate(capacity: 1)
    private var state: State

    init(_ initial: State) {
        state = initial
        pthread_mutex_init(mutex, nil)
        var attributes = pthread_condattr_t()
        pthread_condattr_init(&attributes)
        pthread_condattr_setclock(&attributes, CLOCK_MONOTONIC)
        pthread_cond_init(condition, &attributes)
        pthread_condattr_destroy(&attributes)
    }

    deinit {
        pthread_cond_destroy(condition)
        pthread_mutex_destroy(mutex)
        condition.deallocate()
        mutex.deallocate()
    }

    /// Runs `body` with the state locked, then wakes every waiter.
    func withLock<R>(_ body: (inout State) throws -> R) rethrows -> R {
        pthread_mutex_lock(mutex)
        defer {
            pthread_cond_broadcast(condition)
            pthread_mutex_unlock(mutex)
        }
        return try body(&state)
    }

    /// Waits until `ready` returns a value, or until `deadline` (nil: forever) passes.
    ///
    /// `ready` runs with the lock held and may change the state; returns nil on timeout.
    func wait<R>(until deadline: Deadline?, _ ready: (inout State) throws -> R?) rethrows -> R? {
        pthread_mutex_lock(mutex)
        defer {
            pthread_cond_broadcast(condition)
            pthread_mutex_unlock(mutex)
        }
        while true {
            if let value = try ready(&state) { return value }
            if let deadline {
                var time = deadline.timespecValue
                if pthread_cond_timedwait(condition, mutex, &time) == ETIMEDOUT {
                    return try ready(&state)
                }
            } else {
                pthread_cond_wait(condition, mutex)
            }
        }
    }
}
