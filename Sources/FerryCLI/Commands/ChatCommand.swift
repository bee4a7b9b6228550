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

    /// Who may join, as `receive --accept` says whose offers are taken.
    public enum AcceptPolicy: String, Sendable, CaseIterable {
        /// Ask the person about each stranger (a pinned peer joins without a question); when stdin is not a
        /// terminal nobody can be asked, and only trusted peers join (as `trusted`).
        case ask
        /// Every peer joins.
        case all
        /// As `receive --accept trusted`: only pinned peers join; every stranger is refused without a question.
        case trusted
        /// Every connection request is denied, and a stranger this chat dials is refused: only pinned peers this
        /// chat dials join.
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
            between: compare them before trusting what it writes.

            First contact is as for ferry receive. With --accept ask (the default), each stranger that wants to \
            chat, or that this chat reached, is a question showing its device ID and that code; the next line \
            typed answers it: y lets it in, n refuses it (its screen says it was not accepted), a lets it in \
            and trusts it from now on. The side that dialled shows the same code while the other is asked. Any \
            other line is sent as usual. Until the answer nothing typed goes to the stranger and nothing it \
            writes is shown (a few lines are kept, cut to 4 KiB each, and shown if it is let in); a question \
            nobody answers within 60 seconds refuses the stranger. At most 16 questions wait; more strangers are \
            refused as busy. A peer that did not let this chat in is tried again after 60 seconds; one this chat \
            refused is not, until it is pinned (the trusted-peers file is followed while the chat runs). Trusted peers join without a \
            question. When stdin is not a terminal nobody can be asked, so only trusted peers join (use \
            --accept all for everyone). --accept trusted refuses every stranger without asking; --accept none \
            denies every request and refuses every stranger this chat dials.

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
                help: "Ask about each stranger, let everyone in, trusted (pinned) peers only, or deny every request.",
                default: AcceptPolicy.ask.rawValue,
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

    /// How long a question about a stranger waits for the person's answer (as `receive`'s default `--ask-timeout`).
    public static let askTimeout: Duration = .seconds(60)
    /// How long this chat waits for a peer it dials to answer: the handshake, and the other person's question.
    static let connectTimeout: Duration = askTimeout + .seconds(10)

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
        accept: AcceptPolicy = .ask,
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
            accept: try values.choice("accept", as: "policy") ?? .ask,
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
