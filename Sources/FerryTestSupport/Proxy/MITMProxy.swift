import FerrySecurity
import FerrySystem
import FerryWire
import Glibc
import Synchronization

/// A man in the middle with keys of its own: it speaks ferry's transport (preface, TLS 1.3 with its own
/// certificate) to the client that connects to it and to the real target, and relays the plaintext both ways.
///
/// Why: this is what an attacker on the path can do against ferry, and the tests show that it is not enough: the
/// two TLS sessions give the two people different pairing codes, and a receiver that pinned the real sender refuses
/// the link. It rewrites each side's hello as a real attacker would, so that the "hello names the certificate's
/// device" check passes: the device ID becomes the proxy's own, the peer ID one of its own per direction (so that
/// a peer ID a side learnt from a discovery beacon does not betray it), and the datagram port 0 (the proxy relays
/// the reliable link only, so neither side sends datagrams past it). Every frame after the hello is relayed
/// unchanged.
///
/// Listens on 127.0.0.1 (a free port); runs on its own `Reactor`, one task per connection and one per direction.
/// `close()` closes every socket, ends every task and shuts the reactor down; call it (the tasks keep the proxy
/// alive until then).
public final class MITMProxy: Sendable {
    private struct State {
        var closed = false
        var nextID = 0
        var tasks: [Int: Task<Void, Never>] = [:]
        var streams: [Int: [any ByteStream]] = [:]
        var accepted = 0
        var rewrittenHellos = 0
    }

    /// The port the proxy listens on (127.0.0.1).
    public let port: UInt16
    /// The proxy's own identity: what both sides see instead of each other.
    public let identity: DeviceIdentity
    private let context: TLSContext
    private let target: FerrySystem.SocketAddress
    private let reactor: Reactor
    private let listener: TCPListener
    private let state = Mutex(State())

    /// Starts listening on 127.0.0.1 and relaying each connection to `targetHost:targetPort`, with a fresh identity.
    public init(targetHost: String = "127.0.0.1", targetPort: UInt16) throws {
        guard let host = IPv4Address(targetHost) else {
            throw TestSupportError.systemCall("inet_pton(\(targetHost))", errno: EINVAL)
        }
        target = .ipv4(host, port: targetPort)
        identity = try DeviceIdentity.generate()
        context = try TLSContext(identity: identity)
        reactor = try Reactor()
        do {
            listener = try reactor.listenTCP(on: .ipv4(.loopback, port: 0))
        } catch {
            reactor.shutdown()
            throw error
        }
        guard case .ipv4(_, let port) = listener.localAddress else { preconditionFailure("bound to 127.0.0.1") }
        self.port = port
        let task = Task { [self] in await acceptLoop() }
        state.withLock { $0.tasks[-1] = task }
    }

    /// Runs `body` with a proxy in front of `targetHost:targetPort` and closes it afterwards, also when `body`
    /// throws.
    nonisolated(nonsending) public static func with<T>(
        targetHost: String = "127.0.0.1", targetPort: UInt16, _ body: (MITMProxy) async throws -> T
    ) async throws -> T {
        let proxy = try MITMProxy(targetHost: targetHost, targetPort: targetPort)
        do {
            let result = try await body(proxy)
            await proxy.close()
            return result
        } catch {
            await proxy.close()
            throw error
        }
    }

    /// The device ID both sides see in place of each other's.
    public var deviceID: DeviceID { identity.deviceID }

    /// How many connections the proxy has accepted so far.
    public var acceptedConnections: Int { state.withLock { $0.accepted } }

    /// How many hellos it has rewritten (two per connection that got as far as both hellos).
    public var rewrittenHellos: Int { state.withLock { $0.rewrittenHellos } }

    /// Stops listening, closes every connection, waits for every task and shuts the reactor down; idempotent.
    public func close() async {
        let (tasks, streams) = state.withLock { state in
            state.closed = true
            defer { state.streams = [:] }
            return (Array(state.tasks.values), state.streams.values.flatMap { $0 })
        }
        listener.close()
        for stream in streams { stream.close() }
        for task in tasks {
            task.cancel()
            await task.value
        }
        reactor.shutdown()
    }

    private func acceptLoop() async {
        while !Task.isCancelled {
            let client: TCPConnection
            do {
                client = try await listener.accept()
            } catch {
                return  // closed
            }
            let admitted = state.withLock { state -> Bool in
                guard !state.closed else { return false }
                state.accepted += 1
                let id = state.nextID
                state.nextID += 1
                state.streams[id] = [client]
                state.tasks[id] = Task { [self] in
                    await serve(client, id: id)
                    forget(id)
                }
                return true
            }
            if !admitted { client.close() }
        }
    }

    /// One intercepted connection: TLS server towards the client, TLS client towards the target, relay both ways.
    private func serve(_ client: TCPConnection, id: Int) async {
        let upstream: TCPConnection
        do {
            upstream = try await reactor.connectTCP(to: target, timeout: .seconds(30))
        } catch {
            client.close()  // the client sees the connection closed, as with a dead target
            return
        }
        guard track(upstream, id: id),
            let towardsClient = try? TLSStream(over: client, context: context, role: .server),
            let towardsTarget = try? TLSStream(over: upstream, context: context, role: .client)
        else {
            client.close()
            upstream.close()
            return
        }
        let shownToTarget = PeerID(rawValue: .random(in: 1...UInt64.max))
        let shownToClient = PeerID(rawValue: .random(in: 1...UInt64.max))
        await withTaskGroup(of: Void.self) { group in
            group.addTask { [self] in
                await relay(from: towardsClient, to: towardsTarget, as: shownToTarget)
                towardsClient.close()
                towardsTarget.close()
            }
            group.addTask { [self] in
                await relay(from: towardsTarget, to: towardsClient, as: shownToClient)
                towardsClient.close()
                towardsTarget.close()
            }
        }
    }

    /// Copies one direction's plaintext, with the first frame (the hello) rewritten to name the proxy; returns at
    /// the end of the stream, on an error, or when the first frame is not a valid hello.
    private func relay(from source: TLSStream, to destination: TLSStream, as peerID: PeerID) async {
        var decoder: FrameDecoder? = FrameDecoder(maximumPayloadLength: Limits.maxHelloPayload)
        while true {
            guard let bytes = try? await source.read(maxBytes: 64 << 10), !bytes.isEmpty else { return }
            var output = bytes
            if var pending = decoder {
                pending.append(bytes)
                let first: Frame?
                do {
                    first = try pending.nextFrame()
                } catch {
                    return  // not a hello a ferry peer would accept either
                }
                guard let first else {
                    decoder = pending
                    continue
                }
                guard case .hello(var hello) = try? SessionMessage(frame: first) else { return }
                hello.deviceID = identity.deviceID
                hello.peerID = peerID
                hello.datagramPort = 0
                output = SessionMessage.hello(hello).encoded() + pending.takeBufferedBytes()
                decoder = nil
                state.withLock { $0.rewrittenHellos += 1 }
            }
            guard (try? await destination.write(output)) != nil else { return }
        }
    }

    /// Adds a socket of connection `id` to those `close()` closes; false when the proxy is already closed.
    private func track(_ stream: any ByteStream, id: Int) -> Bool {
        state.withLock { state in
            guard !state.closed else { return false }
            state.streams[id, default: []].append(stream)
            return true
        }
    }

    private func forget(_ id: Int) {
        state.withLock { state in
            state.tasks[id] = nil
            state.streams[id] = nil
        }
    }
}
