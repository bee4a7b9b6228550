import CFerryLinux
import Glibc

extension FileDescriptor {
    /// `socket(2)` of `family` and `type` (SOCK_STREAM / SOCK_DGRAM) with SOCK_NONBLOCK | SOCK_CLOEXEC.
    static func socket(family: Int32, type: Int32) throws(SystemError) -> FileDescriptor {
        let flags = type | FERRY_SOCK_NONBLOCK | FERRY_SOCK_CLOEXEC
        let fd = try retryingSyscall { Glibc.socket(family, flags, 0) }.get("socket()")
        return FileDescriptor(rawValue: fd)
    }

    /// `bind(2)` to `address`.
    func bind(to address: SocketAddress) throws(SystemError) {
        _ = try address.withSockAddr { pointer, length in
            retryingSyscall { Glibc.bind(rawValue, pointer, length) }
        }.get("bind()")
    }

    /// `listen(2)` with `backlog`.
    func listen(backlog: Int32) throws(SystemError) {
        _ = try retryingSyscall { Glibc.listen(rawValue, backlog) }.get("listen()")
    }

    /// `connect(2)` without blocking: `.processed` when connected at once, `.wouldBlock` when in progress
    /// (EINPROGRESS, or EINTR, after which the connection also continues asynchronously).
    func _connect(to address: SocketAddress) -> Result<IOResult<Void>, Errno> {
        let result = address.withSockAddr { pointer, length in Glibc.connect(rawValue, pointer, length) }
        if result == 0 { return .success(.processed(())) }
        let errno = Errno.current
        if errno == .inProgress || errno == .interrupted { return .success(.wouldBlock) }
        return .failure(errno)
    }

    /// `accept4(2)` with SOCK_NONBLOCK | SOCK_CLOEXEC: the new descriptor and the peer's address.
    func _accept() -> Result<IOResult<(FileDescriptor, SocketAddress?)>, Errno> {
        var storage = sockaddr_storage()
        var length = socklen_t(MemoryLayout<sockaddr_storage>.size)
        let result = withUnsafeMutablePointer(to: &storage) { pointer in
            pointer.withMemoryRebound(to: sockaddr.self, capacity: 1) { address in
                nonBlockingSyscall {
                    ferry_accept4(rawValue, address, &length, FERRY_SOCK_NONBLOCK | FERRY_SOCK_CLOEXEC)
                }
            }
        }
        return result.map { outcome in
            switch outcome {
            case .wouldBlock: return .wouldBlock
            case .processed(let fd):
                return .processed((FileDescriptor(rawValue: fd), SocketAddress(storage: storage, length: length)))
            }
        }
    }

    /// `recv(2)` into `buffer`; 0 means the peer closed its side.
    func _receive(into buffer: UnsafeMutableRawBufferPointer) -> Result<IOResult<Int>, Errno> {
        nonBlockingSyscall { recv(rawValue, buffer.baseAddress, buffer.count, 0) }
    }

    /// `send(2)` with MSG_NOSIGNAL (a closed peer yields EPIPE, never SIGPIPE).
    func _send(_ buffer: UnsafeRawBufferPointer) -> Result<IOResult<Int>, Errno> {
        nonBlockingSyscall { Glibc.send(rawValue, buffer.baseAddress, buffer.count, Int32(MSG_NOSIGNAL)) }
    }

    /// `recvfrom(2)` into `buffer`: the datagram's length (truncated to the buffer) and its sender.
    func _receiveFrom(into buffer: UnsafeMutableRawBufferPointer) -> Result<IOResult<(Int, SocketAddress?)>, Errno> {
        var storage = sockaddr_storage()
        var length = socklen_t(MemoryLayout<sockaddr_storage>.size)
        let result = withUnsafeMutablePointer(to: &storage) { pointer in
            pointer.withMemoryRebound(to: sockaddr.self, capacity: 1) { address in
                nonBlockingSyscall { recvfrom(rawValue, buffer.baseAddress, buffer.count, 0, address, &length) }
            }
        }
        return result.map { outcome in
            switch outcome {
            case .wouldBlock: return .wouldBlock
            case .processed(let count): return .processed((count, SocketAddress(storage: storage, length: length)))
            }
        }
    }

    /// `sendto(2)` of `buffer` to `address`, with MSG_NOSIGNAL.
    func _send(_ buffer: UnsafeRawBufferPointer, to address: SocketAddress) -> Result<IOResult<Int>, Errno> {
        address.withSockAddr { pointer, length in
            nonBlockingSyscall {
                sendto(rawValue, buffer.baseAddress, buffer.count, Int32(MSG_NOSIGNAL), pointer, length)
            }
        }
    }

    /// `shutdown(2)` with `how` (SHUT_RD / SHUT_WR / SHUT_RDWR).
    func _shutdown(_ how: Int32) -> Result<Void, Errno> {
        retryingSyscall { Glibc.shutdown(rawValue, how) }.map { _ in () }
    }

    /// `setsockopt(2)` of a plain value (an `Int32`, `in_addr`, `ip_mreq`, ...).
    func setOption<Value: BitwiseCopyable>(level: Int32, name: Int32, value: Value, call: String = "setsockopt()")
        throws(SystemError)
    {
        _ = try withUnsafeBytes(of: value) { raw in
            retryingSyscall { setsockopt(rawValue, level, name, raw.baseAddress, socklen_t(raw.count)) }
        }.get(call)
    }

    /// `getsockopt(2)` of an `Int32` option (such as SO_ERROR).
    func intOption(level: Int32, name: Int32) throws(SystemError) -> Int32 {
        var value: Int32 = 0
        var length = socklen_t(MemoryLayout<Int32>.size)
        _ = try retryingSyscall { getsockopt(rawValue, level, name, &value, &length) }.get("getsockopt()")
        return value
    }

    /// `getsockname(2)`: the address this socket is bound to.
    func localAddress() throws(SystemError) -> SocketAddress {
        try address(call: "getsockname()") { getsockname(rawValue, $0, $1) }
    }

    /// `getpeername(2)`: the address this socket is connected to.
    func remoteAddress() throws(SystemError) -> SocketAddress {
        try address(call: "getpeername()") { getpeername(rawValue, $0, $1) }
    }

    private func address(
        call: String, _ body: (UnsafeMutablePointer<sockaddr>, UnsafeMutablePointer<socklen_t>) -> Int32
    ) throws(SystemError) -> SocketAddress {
        var storage = sockaddr_storage()
        var length = socklen_t(MemoryLayout<sockaddr_storage>.size)
        _ = try withUnsafeMutablePointer(to: &storage) { pointer in
            pointer.withMemoryRebound(to: sockaddr.self, capacity: 1) { address in
                retryingSyscall { body(address, &length) }
            }
        }.get(call)
        guard let address = SocketAddress(storage: storage, length: length) else {
            throw SystemError(call: call, errno: Errno(rawValue: EAFNOSUPPORT))
        }
        return address
    }
}
