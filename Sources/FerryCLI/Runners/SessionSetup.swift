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
        try Self.checkInterfaces(global)
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

    /// Fails when an interface of `--interface` or `$FERRY_INTERFACE` is not there, up with an IPv4 address (the
    /// session's own check, made here where it is known which of the two named it): the error names the flag or the
    /// variable, and lists the interfaces that are usable.
    static func checkInterfaces(_ global: GlobalOptions) throws {
        guard !global.interfaces.isEmpty, let all = try? NetworkInterface.all() else { return }
        let usable = all.filter { $0.isUp && $0.ipv4 != nil }.map(\.name)
        let missing = global.interfaces.filter { !usable.contains($0) }
        guard !missing.isEmpty else { return }
        let names = missing.map { TerminalText.excerpt($0) }
        let problem =
            "no usable interface named \(names.joined(separator: ", ")) (it must be up and have an IPv4 address; "
            + (usable.isEmpty
                ? "none is" : "usable: " + usable.map { TerminalText.excerpt($0) }.joined(separator: ", "))
            + ")"
        if let variable = global.variables["interface"] {
            let value = global.interfaces.map { TerminalText.excerpt($0) }.joined(separator: ",")
            throw CLIError.failure(
                "\(variable)=\(value): \(problem); unset \(variable) or set it to interfaces that are up")
        }
        throw CLIError.failure(names.map { "--interface \($0)" }.joined(separator: ", ") + ": " + problem)
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

    /// The line above the rows of `row(_:state:)`: `ferry peers` prints it before its first row, `/peers` of chat
    /// before its list.
    static let header = columns("NAME", "DEVICE", "ADDRESS", "STATE", "CONNECTIONS")

    /// One table row: name, short device ID, address, state, and what the peer does with connections in plain words
    /// (`connections(_:)`); the JSON keeps `mode` and `accepting`.
    static func row(_ peer: PeerInfo, state: PeerState) -> String {
        columns(
            name(peer), peer.deviceID.shortDescription, peer.address?.description ?? "-", state.rawValue,
            connections(peer))
    }

    /// What a person asks of a peer's mode: will it take my connection? `accepts connections` (a server: a
    /// `ferry receive`), `accepts and makes connections` (a peer: a chat), `only makes connections` (a client),
    /// `accepts none now` (it announces that it takes no new connection).
    static func connections(_ peer: PeerInfo) -> String {
        if peer.mode == .client { return "only makes connections" }
        guard peer.isAcceptingConnections else { return "accepts none now" }
        return peer.mode == .server ? "accepts connections" : "accepts and makes connections"
    }

    /// The columns padded to their widths (a name of 20, a short device ID of 9, an address of 22, a state of 12).
    static func columns(
        _ name: String, _ device: String, _ address: String, _ state: String, _ connections: String
    ) -> String {
        func padded(_ text: String, _ width: Int) -> String {
            text.count < width ? text + String(repeating: " ", count: width - text.count) : text
        }
        return [padded(name, 20), padded(device, 9), padded(address, 22), padded(state, 12), connections]
            .joined(separator: "  ")
    }
}
