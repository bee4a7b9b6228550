/// `ferry receive`: accepts files from peers into a directory.
///
/// The other end of `ferry send`: advertises itself (server mode), accepts connections, and answers each offer
/// by asking on the terminal or by policy. Files appear in the directory only when complete and verified, so
/// other programs can watch it. Its run step is in `ReceiveCommand+Run.swift`.
public struct ReceiveCommand: ParsableCommand, Equatable {
    /// How offers are answered.
    public enum AcceptPolicy: String, Sendable, CaseIterable {
        /// Ask on the terminal; deny when there is none, or when nobody answers in time.
        case ask
        /// Accept every offer.
        case all
        /// Accept offers from trusted (pinned) peers only; refuse every other peer's connection without asking.
        case trusted
    }

    /// The name, help text and options of `ferry receive`.
    public static let configuration = CommandConfiguration(
        commandName: "receive",
        abstract: "Receive files from peers of the session into a directory.",
        discussion: """
            Each file is written beside its destination and appears under its name only once it is complete and \
            its checksum matches; a name that exists gets a numbered variant, and nothing outside the directory \
            is ever touched. An interrupted transfer resumes where it stopped when the sender tries again.

            Each peer that connects shows the 6-digit pairing code of its link at once; ferry send shows the same \
            code, unless someone is in between, and asks its user to confirm it before anything is sent. With \
            --accept ask, each offer shows the sender, its device ID and that code, the files and their sizes, \
            and waits for y, n or a (always: accept, and trust the sender from now on); it is denied when nobody \
            answers within --ask-timeout seconds (60 by default). A sender may have 3 offers asked about a minute, \
            everyone together 10: more are denied without asking, and the sender is told so. Offers from trusted peers are accepted without asking; when stdin is not a \
            terminal, nobody can be asked, so those are the only ones accepted. With --accept trusted (for a \
            headless receiver), only trusted peers can connect; see ferry trust. Every refused peer leaves a line \
            with its device ID, to pin it with ferry trust add.

            When a sender broadcasts to several receivers, this one passes the chunks it has checked on to the \
            other receivers the sender named, and takes chunks from them, over links opened without asking (the \
            sender vouched for them; they are not shown as connected peers). Every chunk is checked against the \
            sender's digest; a receiver that passes on a bad one is cut off and named. --no-relay takes everything \
            from the sender and uploads nothing to other receivers (a metered link, or a machine that must not serve \
            others).

            A text sent with ferry send --text is printed with the sender's name (escaped); it is kept as a \
            file (message.txt) only when --into names the directory.

            Partial files of interrupted transfers stay in DIR/.ferry-staging so that a transfer sent again \
            resumes; those untouched for 7 days are removed when ferry receive starts (it says how many), and \
            --clear-staged removes them all now (except those a running receiver is writing).

            LocalSend apps (phones, other desktops) can send here too: ferry serves LocalSend's HTTPS API on port \
            53317 beside its own protocol, with the same --accept policy, checks and summaries (their peers show \
            their certificate's SHA-256 as device ID; pin one with ferry trust add). --pin-file FILE makes LocalSend \
            senders give the PIN in FILE (its first line; a file others can read is refused), --ask-pin the one typed \
            at a prompt (twice, not shown); --no-localsend \
            serves ferry peers only. LocalSend follows --interface: with none, ferry serves it on every IPv4 \
            address and announces itself on every interface but loopback; with some, on those; with only \
            --interface lo it is off (no phone reaches loopback). When a LocalSend app on this machine holds the \
            port, ferry says so once and goes on with its own protocol.

            The first line tells where ferry listens; with --json it is \
            {"event":"listening","port":P,"directory":"...","name":"...","peerID":"..."}.
            """,
        options: [
            .option(
                "into",
                valueName: "dir",
                help: "Put received files in this directory (created if missing, but not its parents).",
                default: "XDG_DOWNLOAD_DIR from ~/.config/user-dirs.dirs, else ~/Downloads"
            ),
            .option(
                "accept",
                valueName: "policy",
                help: "Ask before accepting each offer, accept all, or accept trusted peers only.",
                default: AcceptPolicy.ask.rawValue,
                values: AcceptPolicy.allCases.map(\.rawValue)
            ),
            .option(
                "ask-timeout",
                valueName: "seconds",
                help: "With --accept ask, deny an offer nobody answered within this time.",
                default: defaultAskTimeout.shortDescription
            ),
            .flag("once", help: "Exit after the first transfer: 0 if every file arrived, 1 otherwise."),
            .flag(
                "no-relay",
                help: "In a broadcast, take every chunk from the sender and pass nothing on to other receivers."),
            .flag(
                "clear-staged",
                help: "Remove the partial files kept for resuming (DIR/.ferry-staging), say how many, and exit."),
            .flag("no-localsend", help: "Serve ferry peers only, not LocalSend apps."),
            .option(
                "pin-file",
                valueName: "file",
                help: "LocalSend senders must give the PIN this file holds (never on the command line)."),
            .flag(
                "ask-pin",
                help: "Ask on the terminal (without echo) for the PIN LocalSend senders must give."),
            .option(
                "localsend-port",
                valueName: "port",
                help: "Serve LocalSend apps on this TCP port.",
                default: "53317"),
            .flag("json", help: "Print one JSON object per line for every event instead of text."),
        ]
    )

    /// The default of `--ask-timeout`, in seconds.
    public static let defaultAskTimeout: Double = 60
    /// The largest `--ask-timeout` accepted, in seconds (one day).
    public static let maximumAskTimeout: Double = 86_400

    /// Where to put files; nil for the user's download directory.
    public var into: String?
    /// How offers are answered (`--accept`): ask on the terminal, accept all, or trusted peers only.
    public var accept: AcceptPolicy
    /// Seconds an offer waits for the person's answer under `--accept ask`.
    public var askTimeout: Double
    /// `--once`: exit after the first transfer, 0 if every file arrived and 1 otherwise.
    public var once: Bool
    /// `--clear-staged`: remove the staged files and exit instead of receiving.
    public var clearStaged: Bool
    /// Whether this receiver takes part in a broadcast's swarm: fetches chunks from and serves verified chunks to the
    /// other recipients (false: `--no-relay`, everything from the sender, nothing uploaded).
    public var relay: Bool
    /// Whether to print JSON lines for every event instead of text.
    public var json: Bool
    /// Whether LocalSend apps are served too (false: `--no-localsend`).
    public var localSend: Bool
    /// `--pin-file`: the file holding the PIN LocalSend senders must give.
    public var pinFile: String?
    /// `--ask-pin`: the PIN LocalSend senders must give is typed at a prompt (twice, not shown) before serving.
    public var askPin: Bool
    /// `--localsend-port`: the TCP port of the LocalSend server; nil when not given (LocalSend's 53317).
    public var localSendPort: UInt16?
    /// The options every command accepts (session, name, port, peers, interfaces, verbosity).
    public var global: GlobalOptions

    /// Creates the command with the defaults of the command line for what is not given.
    public init(
        into: String? = nil, accept: AcceptPolicy = .ask, askTimeout: Double = ReceiveCommand.defaultAskTimeout,
        once: Bool = false, clearStaged: Bool = false, relay: Bool = true, json: Bool = false,
        localSend: Bool = true, pinFile: String? = nil, askPin: Bool = false, localSendPort: UInt16? = nil,
        global: GlobalOptions = .init()
    ) {
        self.askPin = askPin
        self.localSend = localSend
        self.pinFile = pinFile
        self.localSendPort = localSendPort
        self.relay = relay
        self.into = into
        self.accept = accept
        self.askTimeout = askTimeout
        self.once = once
        self.clearStaged = clearStaged
        self.json = json
        self.global = global
    }

    /// Builds the command from scanned values; throws `CLIError.usage` for a value that does not parse, or for
    /// `--clear-staged` together with an option that only applies to receiving.
    public init(parsing values: ParsedValues) throws {
        if values.isSet("clear-staged"),
            let other = [
                "accept", "ask-timeout", "once", "no-relay", "no-localsend", "pin-file", "ask-pin", "localsend-port",
            ]
                .first(where: { values.count($0) > 0 })
        {
            throw CLIError.usage(
                "--clear-staged removes staged files and exits; it takes --into and --json, not --\(other)")
        }
        if values.isSet("no-localsend"),
            let other = ["pin-file", "ask-pin", "localsend-port"].first(where: { values.count($0) > 0 })
        {
            throw CLIError.usage("--no-localsend serves no LocalSend app; --\(other) is for LocalSend apps")
        }
        if values.isSet("ask-pin"), values.count("pin-file") > 0 {
            throw CLIError.usage("--ask-pin asks for the PIN that --pin-file gives; choose one of them")
        }
        var port: UInt16?
        if let text = values.last("localsend-port") {
            guard let value = UInt16(text), value > 0 else {
                throw CLIError.usage("--localsend-port: a TCP port is a number from 1 to 65535 (got \(text))")
            }
            port = value
        }
        self.init(
            into: values.last("into"),
            accept: try values.choice("accept", as: "policy") ?? .ask,
            askTimeout: try values.seconds("ask-timeout") ?? Self.defaultAskTimeout,
            once: values.isSet("once"),
            clearStaged: values.isSet("clear-staged"),
            relay: !values.isSet("no-relay"),
            json: values.isSet("json"),
            localSend: !values.isSet("no-localsend"),
            pinFile: values.last("pin-file"),
            askPin: values.isSet("ask-pin"),
            localSendPort: port,
            global: try GlobalOptions(parsing: values)
        )
    }

    /// Throws `CLIError.usage` for an empty `--into` or one containing NUL, or an `--ask-timeout` out of range.
    public func validate() throws {
        if let into, into.isEmpty {
            throw CLIError.usage("--into: the directory must not be empty")
        }
        if let into, into.unicodeScalars.contains("\u{0}") {
            throw CLIError.usage("--into: the directory must not contain a NUL character")
        }
        guard askTimeout > 0, askTimeout <= Self.maximumAskTimeout else {
            throw CLIError.usage(
                "--ask-timeout: the time must be more than 0 and at most \(Int(Self.maximumAskTimeout)) seconds (got"
                    + " \(askTimeout.shortDescription))")
        }
    }
}
