import FerrySecurity
import FerrySystem
import FerryWire
import Foundation
import Glibc
import Synchronization

/// A stranger that completes the TLS handshake with an identity of its own (a fresh one unless given) and then
/// says whatever it likes: what promise 4 is about, now that every link starts with TLS.
final class HostileLink: Sendable {
    let stream: TLSStream
    let identity: DeviceIdentity
    private let reactor: Reactor

    private init(stream: TLSStream, identity: DeviceIdentity, reactor: Reactor) {
        self.stream = stream
        self.identity = identity
        self.reactor = reactor
    }

    /// Connects and runs the handshake.
    static func open(
        to address: SocketAddress, reactor: Reactor, identity: DeviceIdentity? = nil
    ) async throws -> HostileLink {
        let identity = try identity ?? DeviceIdentity.generate()
        let tcp = try await reactor.connectTCP(to: address, timeout: .seconds(30))
        let stream: TLSStream
        do {
            stream = try TLSStream(over: tcp, context: TLSContext(identity: identity), role: .client)
        } catch {
            tcp.close()
            throw error
        }
        let link = HostileLink(stream: stream, identity: identity, reactor: reactor)
        do {
            try await stream.handshake()
        } catch {
            stream.close()
            throw error
        }
        return link
    }

    /// A hello of session "unit" with this link's device ID unless another is given.
    func hello(peerID: UInt64 = .random(in: 1...UInt64.max), name: String, deviceID: DeviceID? = nil) -> Hello {
        Hello(
            peerID: PeerID(rawValue: peerID), deviceID: deviceID ?? identity.deviceID, mode: .peer, capabilities: [],
            listenPort: 0, datagramPort: 0, sessionID: "unit", displayName: name)
    }

    func send(_ bytes: [UInt8]) async throws {
        try await stream.write(bytes)
    }

    /// The messages the other side sends until it closes the link (a reset counts as closing). After `timeout`
    /// the link is closed from this side and what came so far is returned, with `closedByPeer` false.
    func messagesUntilClosed(
        timeout: Duration = .seconds(60)
    ) async -> (messages: [SessionMessage], closedByPeer: Bool) {
        let stream = self.stream
        let reactor = self.reactor
        let expired = Mutex(false)
        let watchdog = Task {
            try await reactor.sleep(until: .now + timeout)
            expired.withLock { $0 = true }
            stream.close()
        }
        defer { watchdog.cancel() }
        var decoder = FrameDecoder(maximumPayloadLength: Limits.maxFramePayload)
        var messages: [SessionMessage] = []
        while true {
            let bytes = (try? await stream.read(maxBytes: 64 << 10)) ?? []
            if bytes.isEmpty { return (messages, !expired.withLock { $0 }) }
            decoder.append(bytes)
            while let frame = try? decoder.nextFrame() {
                if let message = try? SessionMessage(frame: frame) { messages.append(message) }
            }
        }
    }

    func close() {
        stream.close()
    }
}

/// Runs a blocking call on a thread of its own, so that it never holds one of the few cooperative threads the
/// sessions under test need.
func offThePool<T: Sendable>(_ body: @escaping @Sendable () throws -> T) async throws -> T {
    try await withCheckedThrowingContinuation { continuation in
        Thread { continuation.resume(with: Result { try body() }) }.start()
    }
}

/// A plain TCP socket from a chosen loopback address (127.0.0.0/8 is all loopback on Linux), so that tests can
/// play several hosts; blocking (use it through `offThePool`), with a 30 s receive timeout so nothing hangs a test.
struct LoopbackClient: Sendable {
    struct Failure: Error, CustomStringConvertible {
        var description: String
    }

    let fd: Int32

    init(from source: String, to port: UInt16) throws {
        let fd = socket(AF_INET, Int32(SOCK_STREAM.rawValue) | Int32(SOCK_CLOEXEC.rawValue), 0)
        guard fd >= 0 else { throw Failure(description: "socket failed, errno \(errno)") }
        var timeout = timeval(tv_sec: 30, tv_usec: 0)
        _ = setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &timeout, socklen_t(MemoryLayout<timeval>.size))
        var local = Self.address(source, port: 0)
        var remote = Self.address("127.0.0.1", port: port)
        let size = socklen_t(MemoryLayout<sockaddr_in>.size)
        let bound = withUnsafePointer(to: &local) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { bind(fd, $0, size) }
        }
        let connected = withUnsafePointer(to: &remote) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { connect(fd, $0, size) }
        }
        guard bound == 0, connected == 0 else {
            let saved = errno
            Glibc.close(fd)
            throw Failure(description: "connect from \(source) failed, errno \(saved)")
        }
        self.fd = fd
    }

    func write(_ bytes: [UInt8]) {
        _ = bytes.withUnsafeBytes { send(fd, $0.baseAddress, $0.count, Int32(MSG_NOSIGNAL)) }
    }

    /// Reads `count` bytes, or fewer if the stream ends (or 30 s pass) first.
    func read(upTo count: Int) -> [UInt8] {
        var result: [UInt8] = []
        var buffer = [UInt8](repeating: 0, count: count)
        while result.count < count {
            let got = recv(fd, &buffer, count - result.count, 0)
            if got < 0, errno == EINTR { continue }
            guard got > 0 else { break }
            result += buffer[..<got]
        }
        return result
    }

    func close() {
        Glibc.close(fd)
    }

    private static func address(_ text: String, port: UInt16) -> sockaddr_in {
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_port = port.bigEndian
        address.sin_addr.s_addr = inet_addr(text)
        return address
    }
}

/// A `ByteStream` over a TCP connection that passes on only the first `passing` writes and swallows the rest: a TLS
/// client over it sends its preface and ClientHello, finishes its side of the handshake, and leaves the server
/// waiting for a Finished that never comes.
final class SwallowingStream: ByteStream {
    private let inner: TCPConnection
    private let remaining: Mutex<Int>

    init(_ inner: TCPConnection, passing: Int) {
        self.inner = inner
        self.remaining = Mutex(passing)
    }

    func read(maxBytes: Int) async throws -> [UInt8] {
        try await inner.read(maxBytes: maxBytes)
    }

    func write(_ bytes: [UInt8]) async throws {
        let pass = remaining.withLock { remaining in
            defer { remaining -= 1 }
            return remaining > 0
        }
        if pass { try await inner.write(bytes) }
    }

    func close() {
        inner.close()
    }

    var localAddress: SocketAddress { inner.localAddress }
    var remoteAddress: SocketAddress { inner.remoteAddress }
}
