import CFerryLinux
import Glibc

/// A UDP socket owned by the reactor: unreliable datagrams and IPv4 multicast (discovery beacons).
///
/// Why: discovery and unreliable session messages must never block or build queues: `send` drops a datagram
/// when the kernel has no room (as the network would), and `receive` suspends on the reactor.
public final class UDPSocket: Sendable {
    /// The bound address (with the kernel's port when bound to port 0).
    public let localAddress: SocketAddress
    let registration: Registration
    private let reactor: Reactor

    init(reactor: Reactor, registration: Registration, localAddress: SocketAddress) {
        self.reactor = reactor
        self.registration = registration
        self.localAddress = localAddress
    }

    deinit {
        close()
    }

    /// Sends one datagram (`sendto(2)`). Never blocks: returns false if the datagram was dropped because the
    /// kernel had no room (EAGAIN / ENOBUFS).
    /// - Throws: `ReactorError.closed` after `close()`, or `SystemError` ("sendto()", e.g. EMSGSIZE,
    ///   ENETUNREACH).
    @discardableResult
    public func send(_ bytes: [UInt8], to address: SocketAddress) throws -> Bool {
        let result = try registration.withDescriptor { descriptor in
            bytes.withUnsafeBytes { descriptor._send($0, to: address) }
        }
        switch result {
        case .success(.processed): return true
        case .success(.wouldBlock): return false
        case .failure(let errno) where errno == .noBufferSpace: return false
        case .failure(let errno): throw SystemError(call: "sendto()", errno: errno)
        }
    }

    /// The next datagram (`recvfrom(2)`) and its sender; a datagram longer than `maxBytes` is truncated.
    /// - Throws: `ReactorError.closed` after `close()`, `CancellationError`, `ReactorError.reactorShutDown`, or
    ///   `SystemError` ("recvfrom()").
    public func receive(maxBytes: Int = 2048) async throws -> (bytes: [UInt8], from: SocketAddress) {
        precondition(maxBytes > 0, "receive(maxBytes:) needs a positive maxBytes")
        while true {
            let outcome = try registration.withDescriptor { descriptor -> IOResult<([UInt8], SocketAddress?)>? in
                var result: Result<IOResult<(Int, SocketAddress?)>, Errno> = .success(.wouldBlock)
                let bytes = [UInt8](unsafeUninitializedCapacity: maxBytes) { buffer, count in
                    result = descriptor._receiveFrom(into: UnsafeMutableRawBufferPointer(buffer))
                    if case .success(.processed(let (received, _))) = result { count = min(received, maxBytes) }
                }
                switch result {
                case .success(.processed(let (_, sender))): return .processed((bytes, sender))
                case .success(.wouldBlock): return .wouldBlock
                case .failure(let errno) where errno == .connectionRefused: return nil  // ICMP of an earlier send
                case .failure(let errno): throw SystemError(call: "recvfrom()", errno: errno)
                }
            }
            switch outcome {
            case .processed((let bytes, let sender?)): return (bytes, sender)
            case .processed((_, nil)), nil: continue
            case .wouldBlock: try await registration.waitUntilReady(for: .read)
            }
        }
    }

    /// Joins the IPv4 multicast `group` on the interface with address `interface` (IP_ADD_MEMBERSHIP).
    public func joinMulticast(group: IPv4Address, interface: IPv4Address) throws {
        let request = ip_mreq(imr_multiaddr: group.inAddr, imr_interface: interface.inAddr)
        try setOption(level: Int32(IPPROTO_IP), name: IP_ADD_MEMBERSHIP, value: request)
    }

    /// Leaves a multicast group joined with `joinMulticast` (IP_DROP_MEMBERSHIP).
    public func leaveMulticast(group: IPv4Address, interface: IPv4Address) throws {
        let request = ip_mreq(imr_multiaddr: group.inAddr, imr_interface: interface.inAddr)
        try setOption(level: Int32(IPPROTO_IP), name: IP_DROP_MEMBERSHIP, value: request)
    }

    /// Sends multicast datagrams out of the interface with address `interface` (IP_MULTICAST_IF).
    public func setMulticastInterface(_ interface: IPv4Address) throws {
        try setOption(level: Int32(IPPROTO_IP), name: IP_MULTICAST_IF, value: interface.inAddr)
    }

    /// Whether this host's own sockets receive its multicast datagrams (IP_MULTICAST_LOOP; on by default).
    public func setMulticastLoop(_ enabled: Bool) throws {
        try setOption(level: Int32(IPPROTO_IP), name: IP_MULTICAST_LOOP, value: Int32(enabled ? 1 : 0))
    }

    /// The hop limit of multicast datagrams (IP_MULTICAST_TTL; 1 by default: the local network only).
    public func setMulticastTTL(_ ttl: UInt8) throws {
        try setOption(level: Int32(IPPROTO_IP), name: IP_MULTICAST_TTL, value: Int32(ttl))
    }

    /// Closes the socket (`close(2)`); a pending `receive` throws `ReactorError.closed`. Idempotent.
    public func close() {
        registration.close(reason: .closed)
    }

    private func setOption<Value: BitwiseCopyable>(level: Int32, name: Int32, value: Value) throws {
        try registration.withDescriptor { try $0.setOption(level: level, name: name, value: value) }
    }
}
