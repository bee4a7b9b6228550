import FerrySecurity
import FerrySystem
import FerryWire
import Foundation
import Glibc
import Synchronization

/// A stranger on the network that completes the TLS handshake with an identity of its own (a fresh one unless
/// given) and then says whatever it likes to a `ferry` process: what is left to attack once every link is TLS.
final class StrangerLink: Sendable {
    let stream: TLSStream
    let identity: DeviceIdentity

    private init(stream: TLSStream, identity: DeviceIdentity) {
        self.stream = stream
        self.identity = identity
    }

    /// Connects from `source` (any 127.0.0.0/8 address: several hosts on one machine) to 127.0.0.1:`port` and runs
    /// the handshake.
    static func open(port: Int, from source: String = "127.0.0.1", identity: DeviceIdentity? = nil) async throws
        -> StrangerLink
    {
        let identity = try identity ?? DeviceIdentity.generate()
        let socket = try await onOwnThread { try SocketStream(from: source, port: port) }
        let stream: TLSStream
        do {
            stream = try TLSStream(over: socket, context: TLSContext(identity: identity), role: .client)
        } catch {
            socket.close()
            throw error
        }
        do {
            try await stream.handshake()
        } catch {
            stream.close()
            throw error
        }
        return StrangerLink(stream: stream, identity: identity)
    }

    /// A hello of `session` that names this link's certificate unless another device ID is given.
    func hello(session: String, name: String, deviceID: DeviceID? = nil) -> [UInt8] {
        let hello = Hello(
            peerID: PeerID(rawValue: .random(in: 1...UInt64.max)), deviceID: deviceID ?? identity.deviceID,
            mode: .peer, capabilities: [], listenPort: 0, datagramPort: 0, sessionID: session, displayName: name)
        return SessionMessage.hello(hello).encoded()
    }

    func send(_ bytes: [UInt8]) async throws {
        try await stream.write(bytes)
    }

    /// The messages the other side sends until it closes the link (a reset counts). When nothing comes for 60 s
    /// (the socket's receive timeout), returns what came so far with `closedByPeer` false.
    func messagesUntilClosed() async -> (messages: [SessionMessage], closedByPeer: Bool) {
        var decoder = FrameDecoder(maximumPayloadLength: Limits.maxFramePayload)
        var messages: [SessionMessage] = []
        while true {
            let bytes: [UInt8]
            do {
                bytes = try await stream.read(maxBytes: 64 << 10)
            } catch SocketStream.Failure.timedOut {
                return (messages, false)
            } catch {
                return (messages, true)  // the TLS connection failed: the peer closed or reset it
            }
            if bytes.isEmpty { return (messages, true) }
            decoder.append(bytes)
            while let frame = try? decoder.nextFrame() {
                if let message = try? SessionMessage(frame: frame) { messages.append(message) }
            }
        }
    }

    func close() {
        stream.close()
    }

    /// The bytes a TLS client sends first: our preface and a ClientHello, taken from a real `TLSStream` whose
    /// handshake is cut right after it. Replayed on a raw socket, it leaves a server waiting mid-handshake.
    static func prefaceAndClientHello() async throws -> [UInt8] {
        let recorder = RecordingStream()
        let context = try TLSContext(identity: DeviceIdentity.generate())
        let stream = try TLSStream(over: recorder, context: context, role: .client)
        _ = try? await stream.handshake()  // fails at the second read, after the ClientHello was written
        let bytes = recorder.written
        guard bytes.count > Preface.length else { throw TLSCaptureFailure() }
        return bytes
    }

    struct TLSCaptureFailure: Error {}
}

/// A `ByteStream` that keeps what is written to it and answers reads with a valid preface, then the end.
private final class RecordingStream: ByteStream {
    private let state = Mutex<(written: [UInt8], reads: Int)>(([], 0))

    var written: [UInt8] { state.withLock { $0.written } }

    func read(maxBytes: Int) async throws -> [UInt8] {
        let first = state.withLock { entry -> Bool in
            entry.reads += 1
            return entry.reads == 1
        }
        return first ? Array(Preface.encode().prefix(maxBytes)) : []
    }

    func write(_ bytes: [UInt8]) async throws {
        state.withLock { $0.written += bytes }
    }

    func close() {}

    var localAddress: SocketAddress { .ipv4(.loopback, port: 0) }
    var remoteAddress: SocketAddress { .ipv4(.loopback, port: 0) }
}

/// Runs a blocking call on a thread of its own, so that it never holds one of the few cooperative threads.
func onOwnThread<T: Sendable>(_ body: @escaping @Sendable () throws -> T) async throws -> T {
    try await withCheckedThrowingContinuation { continuation in
        Thread { continuation.resume(with: Result { try body() }) }.start()
    }
}

/// A blocking TCP socket from a chosen loopback source address as a `ByteStream` (each call on a thread of its
/// own), so that a `TLSStream` can run over it; 60 s receive timeout.
final class SocketStream: ByteStream {
    enum Failure: Error {
        case connect(source: String, errno: Int32)
        case timedOut
        case io(errno: Int32)
    }

    private let fd: Int32
    private let closed = Mutex(false)

    /// Blocking `connect(2)` from `source` to 127.0.0.1:`port`.
    init(from source: String, port: Int) throws {
        fd = Glibc.socket(AF_INET, Int32(SOCK_STREAM.rawValue) | Int32(SOCK_CLOEXEC.rawValue), 0)
        guard fd >= 0 else { throw Failure.io(errno: errno) }
        var timeout = timeval(tv_sec: 60, tv_usec: 0)
        _ = setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &timeout, socklen_t(MemoryLayout<timeval>.size))
        var local = Self.address(source, port: 0)
        var remote = Self.address("127.0.0.1", port: UInt16(port))
        let size = socklen_t(MemoryLayout<sockaddr_in>.size)
        let bound = withUnsafePointer(to: &local) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { Glibc.bind(fd, $0, size) }
        }
        let connected = withUnsafePointer(to: &remote) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { Glibc.connect(fd, $0, size) }
        }
        guard bound == 0, connected == 0 else {
            let saved = errno
            Glibc.close(fd)
            throw Failure.connect(source: source, errno: saved)
        }
    }

    deinit {
        Glibc.close(fd)
    }

    func read(maxBytes: Int) async throws -> [UInt8] {
        let fd = self.fd
        return try await onOwnThread {
            var buffer = [UInt8](repeating: 0, count: maxBytes)
            while true {
                let count = recv(fd, &buffer, maxBytes, 0)
                if count >= 0 { return Array(buffer[..<count]) }
                if errno == EINTR { continue }
                if errno == ECONNRESET { return [] }
                if errno == EAGAIN || errno == EWOULDBLOCK { throw Failure.timedOut }
                throw Failure.io(errno: errno)
            }
        }
    }

    func write(_ bytes: [UInt8]) async throws {
        let fd = self.fd
        try await onOwnThread {
            var offset = 0
            while offset < bytes.count {
                let sent = bytes[offset...].withUnsafeBytes { send(fd, $0.baseAddress, $0.count, Int32(MSG_NOSIGNAL)) }
                if sent < 0, errno == EINTR { continue }
                guard sent > 0 else { throw Failure.io(errno: errno) }
                offset += sent
            }
        }
    }

    /// Shuts both directions down (a blocked `recv` returns); the descriptor is closed when the stream goes.
    func close() {
        let first = closed.withLock { closed in
            defer { closed = true }
            return !closed
        }
        if first { _ = shutdown(fd, Int32(SHUT_RDWR)) }
    }

    var localAddress: SocketAddress { .ipv4(.loopback, port: 0) }
    var remoteAddress: SocketAddress { .ipv4(.loopback, port: 0) }

    private static func address(_ text: String, port: UInt16) -> sockaddr_in {
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_port = port.bigEndian
        address.sin_addr.s_addr = inet_addr(text)
        return address
    }
}
