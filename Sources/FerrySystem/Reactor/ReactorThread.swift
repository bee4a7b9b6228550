import Glibc

/// A joinable POSIX thread running one closure.
///
/// Why: the reactor loop needs a dedicated thread that `shutdown()` can join (`pthread_join`), which neither
/// Dispatch nor Foundation's `Thread` offers.
struct ReactorThread: Sendable {
    private final class Body {
        let run: @Sendable () -> Void
        init(_ run: @escaping @Sendable () -> Void) { self.run = run }
    }

    private let thread: pthread_t

    /// Starts a thread running `body` (`pthread_create(3)`).
    init(_ body: @escaping @Sendable () -> Void) throws(SystemError) {
        let context = Unmanaged.passRetained(Body(body)).toOpaque()
        var thread = pthread_t()
        let status = pthread_create(
            &thread, nil,
            { context in
                guard let context else { return nil }
                Unmanaged<Body>.fromOpaque(context).takeRetainedValue().run()
                return nil
            }, context)
        guard status == 0 else {
            Unmanaged<Body>.fromOpaque(context).release()
            throw SystemError(call: "pthread_create()", errno: Errno(rawValue: status))
        }
        self.thread = thread
    }

    /// Waits for the thread to return (`pthread_join(3)`); detaches it instead when called on the thread itself
    /// (`pthread_detach(3)`). Call once.
    func join() {
        if pthread_equal(pthread_self(), thread) != 0 {
            _ = pthread_detach(thread)
        } else {
            _ = pthread_join(thread, nil)
        }
    }
}
