import CFerryLinux
import Glibc

extension Reactor {
    /// Opens a listening TCP socket bound to `address` (`socket`, SO_REUSEADDR, `bind`, `listen(2)`); port 0
    /// picks a free port (see `localAddress`). IPv6 listeners are IPv6-only.
    public func listenTCP(on address: SocketAddress, backlog: Int32 = 128, reuseAddress: Bool = true) throws
        -> TCPListener
    {
        let descriptor = try FileDescriptor.socket(family: address.family, type: FERRY_SOCK_STREAM)
        let localAddress: SocketAddress
        do {
            if reuseAddress { try descriptor.setOption(level: SOL_SOCKET, name: SO_REUSEADDR, value: Int32(1)) }
            try Self.configureFamily(descriptor, for: address)
            try descriptor.bind(to: address)
            try descriptor.listen(backlog: backlog)
            localAddress = try descriptor.localAddress()
        } catch {
            descriptor.close()
            throw error
        }
        let registration = try core.register(descriptor)
        return TCPListener(reactor: self, registration: registration, localAddress: localAddress)
    }

    /// Connects to `address` (non-blocking `connect(2)`, then waits until writable and reads SO_ERROR).
    /// - Throws: `ReactorError.timedOut` after `timeout`, `CancellationError` if the task is cancelled,
    ///   `SystemError` ("connect()", e.g. ECONNREFUSED); the socket is closed in every case.
    public func connectTCP(to address: SocketAddress, timeout: Duration) async throws -> TCPConnection {
        let deadline = ContinuousClock.now + timeout
        try Task.checkCancellation()
        let descriptor = try FileDescriptor.socket(family: address.family, type: FERRY_SOCK_STREAM)
        let started: IOResult<Void>
        do {
            try Self.enableNoDelay(descriptor)
            // Connect before registering: epoll reports EPOLLHUP for a TCP socket that is still unconnected.
            started = try descriptor._connect(to: address).get("connect()")
        } catch {
            descriptor.close()
            throw error
        }
        let registration = try core.register(descriptor)
        do {
            var remote: SocketAddress?
            if case .processed = started { remote = try registration.withDescriptor { try $0.remoteAddress() } }
            while remote == nil {
                try await registration.waitUntilReady(for: .write, deadline: deadline)
                remote = try registration.withDescriptor { descriptor -> SocketAddress? in
                    let error = try descriptor.intOption(level: SOL_SOCKET, name: SO_ERROR)
                    if error != 0 { throw SystemError(call: "connect()", errno: Errno(rawValue: error)) }
                    do {
                        return try descriptor.remoteAddress()
                    } catch let error as SystemError where error.errno.rawValue == ENOTCONN {
                        return nil  // a spurious wake-up: still connecting
                    }
                }
            }
            let local = try registration.withDescriptor { try $0.localAddress() }
            guard let remote else { throw ReactorError.closed }  // unreachable: the loop ends with an address
            return TCPConnection(reactor: self, registration: registration, localAddress: local, remoteAddress: remote)
        } catch {
            registration.close(reason: .closed)
            throw error
        }
    }

    /// Opens a UDP socket bound to `address` (port 0: a free port), optionally with SO_REUSEADDR / SO_REUSEPORT
    /// (needed by several sockets sharing a multicast port). IPv6 sockets are IPv6-only.
    public func openUDP(bindingTo address: SocketAddress, reuseAddress: Bool = false, reusePort: Bool = false) throws
        -> UDPSocket
    {
        let descriptor = try FileDescriptor.socket(family: address.family, type: FERRY_SOCK_DGRAM)
        let localAddress: SocketAddress
        do {
            if reuseAddress { try descriptor.setOption(level: SOL_SOCKET, name: SO_REUSEADDR, value: Int32(1)) }
            if reusePort { try descriptor.setOption(level: SOL_SOCKET, name: SO_REUSEPORT, value: Int32(1)) }
            try Self.configureFamily(descriptor, for: address)
            try descriptor.bind(to: address)
            localAddress = try descriptor.localAddress()
        } catch {
            descriptor.close()
            throw error
        }
        let registration = try core.register(descriptor)
        return UDPSocket(reactor: self, registration: registration, localAddress: localAddress)
    }

    /// Registers an accepted descriptor as a connection (TCP_NODELAY, addresses); closes it on failure.
    func adoptConnection(_ descriptor: FileDescriptor, remoteAddress: SocketAddress?) throws -> TCPConnection {
        let local: SocketAddress
        let remote: SocketAddress
        do {
            try Self.enableNoDelay(descriptor)
            local = try descriptor.localAddress()
            remote = try remoteAddress ?? descriptor.remoteAddress()
        } catch {
            descriptor.close()
            throw error
        }
        let registration = try core.register(descriptor)
        return TCPConnection(reactor: self, registration: registration, localAddress: local, remoteAddress: remote)
    }

    private static func enableNoDelay(_ descriptor: FileDescriptor) throws {
        try descriptor.setOption(level: Int32(IPPROTO_TCP), name: TCP_NODELAY, value: Int32(1))
    }

    private static func configureFamily(_ descriptor: FileDescriptor, for address: SocketAddress) throws {
        guard case .ipv6 = address else { return }
        try descriptor.setOption(level: Int32(IPPROTO_IPV6), name: IPV6_V6ONLY, value: Int32(1))
    }
}
