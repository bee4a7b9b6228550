import FerrySecurity
import FerrySystem
import FerryWire
import Foundation
import Glibc
import Synchronization

/// A stranger on the network that completes the TLS handshake with an identity of its own (a fresh one unless
/// given) and then says whatever it likes to a session or a `ferry` process: what is left to attack once every link
/// is TLS. Runs on a blocking socket from a chosen 127.0.0.0/8 source address (several hosts on one machine), each
/// call on a thread of its own, so it needs no reactor and never holds a cooperative thread.
public final class StrangerLink: Sendable {
    public let stream: TLSStream
    public let identity: DeviceIdentity

    private init(stream: TLSStream, identity: DeviceIdentity) {
        self.stream = stream
        self.identity = identity
    }

    /// Connects from `source` to 127.0.0.1:`port` and runs the handshake.
    public static func open(port: Int, from source: String = "127.0.0.1", identity: DeviceIdentity? = nil)
        async throws -> StrangerLink
    {
        let identity = try identity ?? DeviceIdentity.generate()
        let socket = try await onOwnThread { try SocketStream(from: source, port: port) }
        return try await handshake(over: socket, identity: identity, role: .client)
    }

    /// Takes the next connection on `listener` (a ferry session dialling it) and runs the handshake as the TLS
    /// server: a stranger that plays the acceptor of a link, and says whatever it likes from there.
    public static func accept(on listener: LoopbackSocket, identity: DeviceIdentity? = nil) async throws
        -> StrangerLink
    {
        let identity = try identity ?? DeviceIdentity.generate()
        let socket = try await onOwnThread { SocketStream(accepted: try listener.accept()) }
        return try await handshake(over: socket, identity: identity, role: .server)
    }

    /// Runs the TLS handshake over `socket` as `role` with `identity`; the socket is closed when it fails.
    private static func handshake(over socket: SocketStream, identity: DeviceIdentity, role: TLSStream.Role)
        async throws
        -> StrangerLink
    {
        let stream: TLSStream
        do {
            stream = try TLSStream(over: socket, context: TLSContext(identity: identity), role: role)
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

    /// An encoded hello of `session` that names this link's certificate unless another device ID is given.
    public func hello(
        session: String = "unit", peerID: UInt64 = .random(in: 1...UInt64.max), name: String,
        deviceID: DeviceID? = nil
    ) -> [UInt8] {
        let hello = Hello(
            peerID: PeerID(rawValue: peerID), deviceID: deviceID ?? identity.deviceID, mode: .peer, capabilities: [],
            listenPort: 0, datagramPort: 0, sessionID: session, displayName: name)
        return SessionMessage.hello(hello).encoded()
    }

    public func send(_ bytes: [UInt8]) async throws {
        try await stream.write(bytes)
    }

    /// The messages the other side sends until it closes the link (a reset counts). When it has not closed within
    /// `timeout`, the link is closed from this side and what came so far is returned with `closedByPeer` false.
    public func messagesUntilClosed(
        timeout: Duration = .seconds(60)
    ) async -> (messages: [SessionMessage], closedByPeer: Bool) {
        let stream = self.stream
        let expired = Mutex(false)
        let watchdog = Task {
            try await Task.sleep(for: timeout)
            expired.withLock { $0 = true }
            stream.close()
        }
        defer { watchdog.cancel() }
        var decoder = FrameDecoder(maximumPayloadLength: Limits.maxFramePayload)
        var messages: [SessionMessage] = []
        while true {
            let bytes: [UInt8]
            do {
                bytes = try await stream.read(maxBytes: 64 << 10)
            } catch SocketStream.Failure.timedOut {
                return (messages, false)
            } catch {
                bytes = []  // the TLS connection failed: the peer closed or reset it (or the watchdog closed it)
            }
            if bytes.isEmpty { return (messages, !expired.withLock { $0 }) }
            decoder.append(bytes)
            while let frame = try? decoder.nextFrame() {
                if let message = try? SessionMessage(frame: frame) { messages.append(message) }
            }
        }
    }

    public func close() {
        stream.close()
    }

    /// The bytes a TLS client sends first: our preface and a ClientHello, taken from a real `TLSStream` whose
    /// handshake is cut right after it. Replayed on a raw socket, it leaves a server waiting mid-handshake.
    public static func prefaceAndClientHello() async throws -> [UInt8] {
        let recorder = RecordingStream()
        let context = try TLSContext(identity: DeviceIdentity.generate())
        let stream = try TLSStream(over: recorder, context: context, role: .client)
        _ = try? await stream.handshake()  // fails at the second read, after the ClientHello was written
        let bytes = recorder.written
        guard bytes.count > Preface.length else { throw TLSCaptureFailure() }
        return bytes
    }

    public struct TLSCaptureFailure: Error {}
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

    var localAddress: FerrySystem.SocketAddress { .ipv4(.loopback, port: 0) }
    var remoteAddress: FerrySystem.SocketAddress { .ipv4(.loopback, port: 0) }
}

/// A `LoopbackSocket` as a `ByteStream` (each call on a thread of its own), so that a `TLSStream` can run over it;
/// 60 s receive timeout.
final class SocketStream: ByteStream {
    enum Failure: Error {
        case timedOut
        case io(errno: Int32)
    }

    private let socket: LoopbackSocket
    private let closed = Mutex(false)

    /// Blocking `connect(2)` from `source` to 127.0.0.1:`port`.
    init(from source: String, port: Int) throws {
        socket = try LoopbackSocket.connect(port: UInt16(port), from: source, receiveTimeoutSeconds: 60)
    }

    /// A connection a listening `LoopbackSocket` accepted.
    init(accepted: LoopbackSocket) {
        socket = accepted
    }

    deinit {
        socket.close()
    }

    func read(maxBytes: Int) async throws -> [UInt8] {
        let socket = self.socket
        return try await onOwnThread {
            do {
                return try socket.readSome(max: maxBytes)
            } catch let failure as LoopbackSocket.Failure {
                if failure.code == EAGAIN || failure.code == EWOULDBLOCK { throw Failure.timedOut }
                throw Failure.io(errno: failure.code)
            }
        }
    }

    func write(_ bytes: [UInt8]) async throws {
        let socket = self.socket
        try await onOwnThread { try socket.write(bytes) }
    }

    /// Shuts both directions down (a blocked `recv` returns); the descriptor is closed when the stream goes.
    func close() {
        let first = closed.withLock { closed in
            defer { closed = true }
            return !closed
        }
        if first { socket.shutdown() }
    }

    var localAddress: FerrySystem.SocketAddress { .ipv4(.loopback, port: 0) }
    var remoteAddress: FerrySystem.SocketAddress { .ipv4(.loopback, port: 0) }
}
