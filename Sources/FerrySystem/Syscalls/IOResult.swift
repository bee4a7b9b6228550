/// The outcome of a non-blocking call that did not fail: it made progress, or it would have blocked.
///
/// Why: EAGAIN/EWOULDBLOCK is the normal signal to wait for readiness, not an error; returning it as a
/// value (as swift-nio does) keeps it out of `catch` paths and makes callers handle it explicitly.
enum IOResult<Value> {
    /// The call completed with `Value` (bytes moved, a new descriptor, ...).
    case processed(Value)
    /// The call would block (EAGAIN / EWOULDBLOCK / EINPROGRESS where noted).
    case wouldBlock
}

extension Result where Failure == Errno {
    /// The success value, or a `SystemError` naming `call`.
    func get(_ call: String) throws(SystemError) -> Success {
        switch self {
        case .success(let value): return value
        case .failure(let errno): throw SystemError(call: call, errno: errno)
        }
    }
}

/// Runs a system call returning -1 on failure, retrying on EINTR.
@inline(__always)
func retryingSyscall<Value: FixedWidthInteger>(_ body: () -> Value) -> Result<Value, Errno> {
    while true {
        let value = body()
        if value != -1 { return .success(value) }
        let errno = Errno.current
        if errno != .interrupted { return .failure(errno) }
    }
}

/// Runs a non-blocking system call: EINTR retried, EAGAIN/EWOULDBLOCK returned as `.wouldBlock`.
@inline(__always)
func nonBlockingSyscall<Value: FixedWidthInteger>(_ body: () -> Value) -> Result<IOResult<Value>, Errno> {
    switch retryingSyscall(body) {
    case .success(let value): return .success(.processed(value))
    case .failure(let errno) where errno == .wouldBlock: return .success(.wouldBlock)
    case .failure(let errno): return .failure(errno)
    }
}
