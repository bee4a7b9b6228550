import FerrySession
import FerryStateMachines
import FerrySystem
import FerryWire

/// Turns the global options into a session configuration and the manual peer addresses.
struct SessionSetup {
    var configuration: SessionConfiguration
    var manualPeers: [SocketAddress]

    init(
        global: GlobalOptions, context: CommandContext, mode: PeerMode, acceptPolicy: AcceptPolicy,
        maxPeers: Int = 16, disconnectTimeout: Duration = .seconds(10), transfersEnabled: Bool = false
    ) throws {
        let identity = try DeviceIdentityStore(environment: context.environment).loadIdentity()
        let trusted = try TrustStore(environment: context.environment).load()
        configuration = SessionConfiguration(
            sessionID: global.session, displayName: global.displayName, mode: mode, identity: identity,
            trustedDevices: Dictionary(trusted.map { ($0.deviceID, $0.name) }, uniquingKeysWith: { first, _ in first }),
            listenPort: global.port, interfaces: global.interfaces.isEmpty ? nil : global.interfaces,
            acceptPolicy: acceptPolicy, maxPeers: maxPeers, disconnectTimeout: disconnectTimeout,
            transfersEnabled: transfersEnabled)
        // The file commands (receive, send, watch, trust add --peer) read no messages: chats leave them out.
        configuration.takesMessages = !transfersEnabled
        if global.verbose > 0 {
            let verbosity = global.verbose
            let sink = context.stderr
            configuration.log = { level, message in
                guard level <= verbosity else { return }
                // From inside the engine's and the session's actors: never waits for the terminal (dropped and
                // counted while it is not reading).
                sink.writeDroppable("ferry: " + TerminalText.escape(message) + "\n")
            }
        }
        manualPeers = try global.peers.map { text in
            do {
                return try SocketAddress.resolve(text)
            } catch {
                throw CLIError.failure(
                    "--peer \(TerminalText.excerpt(text)): \(error); check the host name or use an IP address")
            }
        }
    }

    /// Runs `body` in a session (on `reactor`, else on one of its own); session errors become one-line CLI errors.
    func run<T: Sendable>(reactor: Reactor? = nil, _ body: (Session) async throws -> T) async throws -> T {
        do {
            return try await Session.run(configuration: configuration, reactor: reactor, body)
        } catch let error as SessionError {
            throw CLIError.failure(error.description)
        } catch let error as SystemError {
            throw CLIError.failure("\(error)")
        }
    }
}

/// How peers and events look in text and in JSON lines. Every peer-controlled string is escaped.
enum PeerFormat {
    static func name(_ peer: PeerInfo) -> String {
        TerminalText.escape(peer.displayName)
    }

    static func json(_ peer: PeerInfo) -> JSONValue {
        .object([
            ("name", .string(peer.displayName)),
            ("peerID", .string(peer.peerID.description)),
            ("deviceID", .string(peer.deviceID.description)),
            ("address", peer.address.map { .string($0.description) } ?? .null),
            ("mode", .string(peer.mode.description)),
            ("state", .string(peer.state.rawValue)),
            ("accepting", .bool(peer.isAcceptingConnections)),
        ])
    }

    /// One table row: name, short device ID, address, mode, state.
    static func row(_ peer: PeerInfo, state: PeerState) -> String {
        let name = name(peer)
        let padded = name.count < 20 ? name + String(repeating: " ", count: 20 - name.count) : name
        let address = peer.address?.description ?? "-"
        let paddedAddress = address.count < 22 ? address + String(repeating: " ", count: 22 - address.count) : address
        return "\(padded)  \(peer.deviceID.shortDescription)  \(paddedAddress)  \(peer.mode)  \(state.rawValue)"
    }
}
