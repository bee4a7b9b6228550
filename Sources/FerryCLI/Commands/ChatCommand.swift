/// `ferry chat`: a line chat with every connected peer of the session.
///
/// The smallest complete use of a session (discover, connect, accept, send reliable and unreliable messages,
/// notice peers leaving), so it doubles as the end-to-end check of the session layer. Its run step is in
/// `ChatCommand+Run.swift`.
public struct ChatCommand: ParsableCommand, Equatable {
    /// GKSession's session modes.
    public enum Mode: String, Sendable, CaseIterable {
        /// Advertises and accepts connections, never connects.
        case server
        /// Browses and connects, never advertises.
        case client
        /// Both.
        case peer
    }

    /// What to answer a connection request with, for headless use.
    public enum AcceptPolicy: String, Sendable, CaseIterable {
        case all
        /// As `receive --accept trusted`: only pinned peers may connect.
        case trusted
        case none
    }

    /// The name, help text and options of `ferry chat`, as `--help` and the completion scripts show them.
    public static let configuration = CommandConfiguration(
        commandName: "chat",
        abstract: "Chat line by line with every peer of the session.",
        discussion: """
            Lines typed are sent to every connected peer; lines received are printed with the sender's name. \
            A peer that joins is shown as trusted (pinned with 'ferry trust add') or not, with its short device \
            ID and the 6-digit pairing code of the link, which its screen shows too unless someone is in \
            between: compare them before trusting what it writes. \
            Commands:
              /peers             List the peers and their states.
              /unreliable TEXT   Send TEXT as a datagram, which may be lost.
              /help              Show these commands.
              /quit              Disconnect from every peer and exit (as does end of input).
            """,
        options: [
            .option(
                "mode",
                valueName: "mode",
                help: "Advertise and accept (server), browse and connect (client), or both (peer).",
                default: Mode.peer.rawValue,
                values: Mode.allCases.map(\.rawValue)
            ),
            .option(
                "max-peers",
                valueName: "n",
                help: "Connect to at most this many peers; further requests are denied.",
                default: String(defaultMaximumPeers)
            ),
            .option(
                "accept",
                valueName: "policy",
                help: "Accept every connection request, those of trusted (pinned) peers only, or none.",
                default: AcceptPolicy.all.rawValue,
                values: AcceptPolicy.allCases.map(\.rawValue)
            ),
            .option(
                "disconnect-timeout",
                valueName: "seconds",
                help: "Consider a silent peer gone after this many seconds.",
                default: defaultDisconnectTimeout.shortDescription
            ),
            .flag("json", help: "Print one JSON object per line instead of text."),
        ]
    )

    /// The default of `--max-peers`.
    public static let defaultMaximumPeers = 16
    /// The accepted range of `--max-peers`.
    public static let maximumPeersRange = 1...1000
    /// The default of `--disconnect-timeout`, in seconds.
    public static let defaultDisconnectTimeout: Double = 10
    /// The smallest `--disconnect-timeout` accepted: two heartbeat intervals.
    public static let minimumDisconnectTimeout: Double = 2
    /// The largest `--disconnect-timeout` accepted, in seconds (one day).
    public static let maximumDisconnectTimeout: Double = 86_400

    /// Whether this end advertises, browses, or both (`--mode`).
    public var mode: Mode
    /// The most peers connected at once.
    public var maxPeers: Int
    /// Which connection requests are accepted (`--accept`).
    public var accept: AcceptPolicy
    /// Seconds of silence after which a peer counts as disconnected.
    public var disconnectTimeout: Double
    /// Whether to print JSON lines instead of text.
    public var json: Bool
    /// The options every command accepts (session, name, port, peers, interfaces, verbosity).
    public var global: GlobalOptions

    /// Creates the command with the defaults of the command line for what is not given.
    public init(
        mode: Mode = .peer,
        maxPeers: Int = ChatCommand.defaultMaximumPeers,
        accept: AcceptPolicy = .all,
        disconnectTimeout: Double = ChatCommand.defaultDisconnectTimeout,
        json: Bool = false,
        global: GlobalOptions = .init()
    ) {
        self.mode = mode
        self.maxPeers = maxPeers
        self.accept = accept
        self.disconnectTimeout = disconnectTimeout
        self.json = json
        self.global = global
    }

    /// Builds the command from scanned values; throws `CLIError.usage` for a value that does not parse.
    public init(parsing values: ParsedValues) throws {
        self.init(
            mode: try values.choice("mode", as: "mode") ?? .peer,
            maxPeers: try values.integer("max-peers") ?? Self.defaultMaximumPeers,
            accept: try values.choice("accept", as: "policy") ?? .all,
            disconnectTimeout: try values.seconds("disconnect-timeout") ?? Self.defaultDisconnectTimeout,
            json: values.isSet("json"),
            global: try GlobalOptions(parsing: values)
        )
    }

    /// Checks `--max-peers` and `--disconnect-timeout` against their ranges; throws `CLIError.usage` otherwise.
    public func validate() throws {
        let range = Self.maximumPeersRange
        guard range.contains(maxPeers) else {
            throw CLIError.usage(
                "--max-peers: the peer limit must be \(range.lowerBound) to \(range.upperBound) (got \(maxPeers))"
            )
        }
        guard disconnectTimeout >= Self.minimumDisconnectTimeout, disconnectTimeout <= Self.maximumDisconnectTimeout
        else {
            throw CLIError.usage(
                "--disconnect-timeout: the timeout must be \(Int(Self.minimumDisconnectTimeout)) to "
                    + "\(Int(Self.maximumDisconnectTimeout)) seconds, as peers send a heartbeat every second "
                    + "(got \(disconnectTimeout.shortDescription))"
            )
        }
    }
}
