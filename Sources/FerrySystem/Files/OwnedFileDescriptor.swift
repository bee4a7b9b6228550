import Synchronization

/// A file or directory descriptor shared by several tasks, closed only once no call is using it.
///
/// Why: `DirectoryHandle` and `RegularFile` are `Sendable` and may be read by several tasks while another one
/// closes them. Closing a number that a `pread` on another thread is still using would let the kernel hand the
/// same number to an unrelated `open`, and the read would then hit the wrong file. As with the reactor's
/// `Registration`, `close()` only marks the descriptor; the last call in flight releases the number.
final class OwnedFileDescriptor: Sendable {
    private struct State {
        var callsInFlight = 0
        var isClosed = false
        var descriptorReleased = false
    }

    private let descriptor: FileDescriptor
    private let state = Mutex(State())

    /// Takes ownership of `descriptor`.
    init(_ descriptor: FileDescriptor) {
        self.descriptor = descriptor
    }

    deinit {
        close()
    }

    /// Runs `body` with the descriptor, keeping the number alive meanwhile.
    /// - Throws: a `SystemError` for `call()` with EBADF if already closed, or `body`'s error.
    func withDescriptor<Value>(
        _ call: (Errno) -> String, _ body: (FileDescriptor) throws(SystemError) -> Value
    ) throws(SystemError) -> Value {
        let open = state.withLock { state in
            guard !state.isClosed else { return false }
            state.callsInFlight += 1
            return true
        }
        guard open else { throw SystemError(call: call(.badFileDescriptor), errno: .badFileDescriptor) }
        defer {
            let releaseNow = state.withLock { state in
                state.callsInFlight -= 1
                guard state.isClosed, state.callsInFlight == 0, !state.descriptorReleased else { return false }
                state.descriptorReleased = true
                return true
            }
            if releaseNow { descriptor.close() }
        }
        return try body(descriptor)
    }

    /// Runs one system call: its failure becomes a `SystemError` for `call()`.
    func run<Value>(_ call: (Errno) -> String, _ body: (FileDescriptor) -> Result<Value, Errno>) throws(SystemError)
        -> Value
    {
        try withDescriptor(call) { descriptor throws(SystemError) in try body(descriptor).get(describing: call) }
    }

    /// Closes the descriptor (`close(2)`) now, or when the last call in flight returns. Idempotent.
    func close() {
        let releaseNow = state.withLock { state in
            guard !state.isClosed else { return false }
            state.isClosed = true
            guard state.callsInFlight == 0 else { return false }
            state.descriptorReleased = true
            return true
        }
        if releaseNow { descriptor.close() }
    }

    /// Whether `close()` was called.
    var isClosed: Bool { state.withLock { $0.isClosed } }
}
