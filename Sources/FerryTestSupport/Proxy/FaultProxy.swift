import Foundation
import Glibc

/// A TCP proxy on 127.0.0.1 that relays to a target and injects faults: delay, stall,
/// truncation, bit flips, black hole.
///
/// Why: the transfer protocol must survive (or cleanly report) broken links and corrupted bytes;
/// putting this between two real peers shows how they behave, without touching their code.
/// Blocking threads (one accept loop, two pumps per connection) keep it small and obviously correct.
public final class FaultProxy: Sendable {
    /// The port the proxy listens on (127.0.0.1).
    public let port: UInt16
    /// The target the proxy connects to.
    public let targetHost: String
    public let targetPort: UInt16
    let core: ProxyCore

    /// Starts listening on 127.0.0.1 (a free port) and relaying to `targetHost:targetPort`.
    public init(targetHost: String = "127.0.0.1", targetPort: UInt16, mode: Mode = .pass) throws {
        _ = Descriptor.ignoreBrokenPipe
        let target = try SocketAddress(host: targetHost, port: targetPort)
        let listener = try SocketAddress.listenOnLoopback()
        self.targetHost = targetHost
        self.targetPort = targetPort
        port = listener.port
        core = ProxyCore(listener: listener.fd, target: target, mode: mode)
        let core = self.core
        core.startThread(name: "ferry-proxy-accept") { core.acceptLoop() }
    }

    deinit {
        close()
    }

    /// What the proxy does with relayed bytes; applies to the next chunk of every open connection.
    public var mode: Mode {
        get { core.state.withLock { $0.mode } }
        set { core.state.withLock { $0.mode = newValue } }
    }

    /// How many connections the proxy has accepted so far.
    public var acceptedConnections: Int { core.state.withLock { $0.accepted } }

    /// Stops listening, closes every connection and waits for the proxy's threads; idempotent.
    public func close() {
        core.shutDown()
    }
}
