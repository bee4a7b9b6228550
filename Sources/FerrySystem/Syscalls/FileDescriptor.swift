import CFerryLinux
import Glibc

/// A raw file descriptor with thin, typed wrappers over the system calls ferry makes on it.
///
/// Why: modelled on apple/swift-system. Each `_op()` returns `Result<_, Errno>` (EINTR retried, EAGAIN as
/// `IOResult.wouldBlock` where the call can block); the throwing `op()` names the C call in its
/// `SystemError`. Only the reactor and its transports use it: they own every descriptor's lifetime.
struct FileDescriptor: Hashable, Sendable {
    /// The descriptor number.
    let rawValue: Int32

    init(rawValue: Int32) {
        self.rawValue = rawValue
    }

    /// `close(2)`. Never retried on EINTR (Linux closes the descriptor anyway).
    func close() {
        _ = Glibc.close(rawValue)
    }

    /// `read(2)` into `buffer`; 0 means end of file.
    func _read(into buffer: UnsafeMutableRawBufferPointer) -> Result<IOResult<Int>, Errno> {
        nonBlockingSyscall { Glibc.read(rawValue, buffer.baseAddress, buffer.count) }
    }

    /// `write(2)` from `buffer`.
    func _write(_ buffer: UnsafeRawBufferPointer) -> Result<IOResult<Int>, Errno> {
        nonBlockingSyscall { Glibc.write(rawValue, buffer.baseAddress, buffer.count) }
    }

    /// `eventfd(2)` with EFD_NONBLOCK | EFD_CLOEXEC.
    static func eventFD() throws(SystemError) -> FileDescriptor {
        let fd = try retryingSyscall { eventfd(0, FERRY_EFD_NONBLOCK | FERRY_EFD_CLOEXEC) }.get("eventfd()")
        return FileDescriptor(rawValue: fd)
    }

    /// `epoll_create1(2)` with EPOLL_CLOEXEC.
    static func epollCreate() throws(SystemError) -> FileDescriptor {
        let fd = try retryingSyscall { epoll_create1(Int32(EPOLL_CLOEXEC)) }.get("epoll_create1()")
        return FileDescriptor(rawValue: fd)
    }

    /// `epoll_ctl(2)` on this epoll descriptor: `operation` (EPOLL_CTL_ADD/MOD/DEL) for `target`, with
    /// `events` and the registration `id` as the event's user data.
    func _epollControl(_ operation: Int32, _ target: FileDescriptor, events: UInt32, id: UInt64) -> Result<Void, Errno>
    {
        var event = epoll_event()
        event.events = events
        event.data.u64 = id
        return retryingSyscall { epoll_ctl(rawValue, operation, target.rawValue, &event) }.map { _ in () }
    }

    /// `epoll_wait(2)` on this epoll descriptor; `timeout` in milliseconds, -1 for none. EINTR yields 0 events.
    func _epollWait(_ events: UnsafeMutableBufferPointer<epoll_event>, timeout: Int32) -> Result<Int, Errno> {
        let count = epoll_wait(rawValue, events.baseAddress, Int32(events.count), timeout)
        if count >= 0 { return .success(Int(count)) }
        let errno = Errno.current
        return errno == .interrupted ? .success(0) : .failure(errno)
    }
}
