import FerrySecurity
import FerryStateMachines
import FerrySystem
import FerryTransfer
import FerryWire
import Synchronization

/// ferry's LocalSend receiver (issue 29): an HTTPS server on LocalSend's port that takes `prepare-upload`,
/// `upload` and `cancel` from LocalSend apps into the transfer engine's one receive path, and answers `info` and
/// `register`.
///
/// Threads and tasks: everything runs on the reactor's descriptors and Swift tasks, no thread of its own. One task
/// accepts; each connection is a task (TLS through `HTTPSStream`, bytes into `HTTPRequestDecoder`, a route per
/// request) with a watchdog task that closes it at its deadline (the head's, then the idle one); the one session's
/// state is the actor `LocalSendSessions` (the pure `LocalSendReceiver` machine and the session's `ForeignPeer`),
/// with a ticker task for the machine's timeouts while a session exists. An upload's body is read from the socket
/// only after the engine took the previous piece (`ForeignPeer.write` waits while the peer's queued bytes are at
/// the engine's bound), so a 1 GiB body passes in pieces of at most `readSize` and is never held whole.
///
/// Identity: the client certificate's SHA-256 (LocalSend's fingerprint) is the peer; the JSON alias is only a name.
/// A client without a certificate has no identity: it may ask `/info` and `register`, never `prepare-upload` or
/// `upload` (403; every official app presents one, docs/SECURITY.md, "LocalSend server").
public final class LocalSendServer: Sendable {
    /// The port it listens on (the configured one, or the kernel's choice for 0).
    public let port: UInt16
    /// The bytes one read takes from a connection at most.
    static let readSize = 256 * 1024
    /// The name a sender that gives no alias is shown under (its `PeerInfo.displayName`); its alias is empty.
    public static let unnamedDeviceName = "LocalSend device"

    let configuration: LocalSendServerConfiguration
    let context: HTTPSContext
    let sessions: LocalSendSessions
    private let listeners: [TCPListener]
    private let state = Mutex<(accepting: Task<Void, Never>?, open: [ObjectIdentifier: HTTPSStream], count: Int)>(
        (nil, [:], 0))

    private init(
        listeners: [TCPListener], port: UInt16, context: HTTPSContext, sessions: LocalSendSessions,
        configuration: LocalSendServerConfiguration
    ) {
        self.listeners = listeners
        self.context = context
        self.sessions = sessions
        self.configuration = configuration
        self.port = port
    }

    /// Listens on `configuration.port` (on each of `configuration.addresses`, or all IPv4 addresses when it is
    /// empty) and serves until `stop`. Throws `portInUse` when something else holds the port.
    public static func start(
        reactor: Reactor, engine: TransferEngine, identity: LocalSendIdentity,
        configuration: LocalSendServerConfiguration
    ) throws(LocalSendServerError) -> LocalSendServer {
        let context: HTTPSContext
        do {
            context = try HTTPSContext(identity: identity, clientCertificate: .request)
        } catch {
            throw .cannotListen("\(error)")
        }
        var listeners: [TCPListener] = []
        var port = configuration.port
        for address in configuration.addresses.isEmpty ? [IPv4Address.any] : configuration.addresses {
            do {
                // Port 0 (tests): the kernel's choice for the first address, the same port for the others.
                let listener = try reactor.listenTCP(on: .ipv4(address, port: port), reuseAddress: true)
                port = listener.localAddress.port
                listeners.append(listener)
            } catch let error as SystemError where error.errno == .addressInUse {
                for listener in listeners { listener.close() }
                throw .portInUse(configuration.port)
            } catch {
                for listener in listeners { listener.close() }
                throw .cannotListen("\(error)")
            }
        }
        let server = LocalSendServer(
            listeners: listeners, port: port, context: context,
            sessions: LocalSendSessions(engine: engine, configuration: configuration), configuration: configuration)
        let accepting = Task {
            await withTaskGroup(of: Void.self) { group in
                for listener in listeners { group.addTask { await server.acceptLoop(listener) } }
            }
        }
        server.state.withLock { $0.accepting = accepting }
        return server
    }

    /// Stops listening, closes every connection and ends the session (nothing unverified kept).
    public func stop() async {
        let (accepting, open) = state.withLock { state in
            defer {
                state.accepting = nil
                state.open = [:]
            }
            return (state.accepting, Array(state.open.values))
        }
        for listener in listeners { listener.close() }
        accepting?.cancel()
        for stream in open { stream.close() }
        await sessions.stop()
    }

    /// Connections served now.
    public var connectionCount: Int { state.withLock { $0.count } }

    private func acceptLoop(_ listener: TCPListener) async {
        while !Task.isCancelled {
            let connection: TCPConnection
            do {
                connection = try await listener.accept()
            } catch {
                if Task.isCancelled { return }
                // A failed accept (EMFILE, a connection reset before accept) is not the end of the server.
                configuration.log?(1, "LocalSend: accept failed: \(error)")
                continue
            }
            let admitted = state.withLock { state -> Bool in
                guard state.accepting != nil, state.count < configuration.maxConnections else { return false }
                state.count += 1
                return true
            }
            guard admitted else {
                configuration.log?(1, "LocalSend: a connection from \(connection.remoteAddress) closed: too many")
                connection.close()
                continue
            }
            Task {
                await self.serve(connection)
                self.state.withLock { $0.count -= 1 }
            }
        }
    }

    private func serve(_ connection: TCPConnection) async {
        let stream: HTTPSStream
        do {
            stream = try HTTPSStream(over: connection, context: context)
        } catch {
            connection.close()
            return
        }
        let key = ObjectIdentifier(stream)
        let registered = state.withLock { state -> Bool in
            guard state.accepting != nil else { return false }
            state.open[key] = stream
            return true
        }
        guard registered else {
            stream.close()
            return
        }
        let watchdog = Watchdog(stream: stream, timeout: configuration.headerTimeout)
        defer {
            watchdog.cancel()
            stream.close()
            _ = state.withLock { $0.open.removeValue(forKey: key) }
        }
        var served = LocalSendConnection(server: self, stream: stream, watchdog: watchdog)
        await served.run(address: connection.remoteAddress.hostDescription)
    }
}

/// Closes a stream when its deadline passes; the connection moves the deadline as it goes.
final class Watchdog: Sendable {
    private let deadline: Mutex<ContinuousClock.Instant>
    private let task: Mutex<Task<Void, Never>?> = Mutex(nil)

    init(stream: HTTPSStream, timeout: Duration) {
        deadline = Mutex(.now + timeout)
        let task = Task { [weak self] in
            while !Task.isCancelled {
                guard let due = self?.deadline.withLock({ $0 }) else { return }
                if ContinuousClock.now >= due {
                    stream.close()
                    return
                }
                try? await Task.sleep(until: due, clock: .continuous)
            }
        }
        self.task.withLock { $0 = task }
    }

    /// The connection must make progress within `timeout` from now.
    func arm(_ timeout: Duration) {
        deadline.withLock { $0 = .now + timeout }
    }

    func cancel() {
        task.withLock { $0?.cancel() }
    }
}
