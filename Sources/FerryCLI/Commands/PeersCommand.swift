/// `ferry peers`: lists the peers of the session as they are discovered.
///
/// The quickest way to check that two machines can see each other at all: it only listens to (and sends)
/// discovery beacons and never connects. Its run step is in `PeersCommand+Run.swift`.
public struct PeersCommand: ParsableCommand, Equatable {
    /// The name, help text and options of `ferry peers`.
    public static let configuration = CommandConfiguration(
        commandName: "peers",
        abstract: "List the peers of the session as they are discovered.",
        discussion: """
            Prints a header line, then a line for each peer when it is found and each time its state changes: \
            its name, the start of its device ID, its address, its state, and what it does with connections: \
            'accepts connections' (a ferry receive, or a chat in --mode server), 'accepts and makes connections' \
            (a chat), 'only makes connections' or 'accepts none now'. With --json, the same as one JSON object \
            per line, whose mode (server, peer, client) and accepting keys say it. \
            LocalSend devices (phones and desktops running the LocalSend app) are listed too, found on LocalSend's \
            multicast group: their alias, the start of their certificate fingerprint, their address, and \
            'LocalSend' with their model and type in the last column (a 'localsend' JSON event); ferry announces \
            itself there while it lists.
            """,
        options: [
            .option(
                "timeout",
                valueName: "seconds",
                help: "Stop listing after this many seconds; 0 runs until interrupted.",
                default: "3"
            ),
            .flag("json", help: "Print one JSON object per line instead of text."),
            .flag("no-localsend", help: "Do not list LocalSend devices nor announce to them."),
        ]
    )

    /// The default of `--timeout`, in seconds.
    public static let defaultTimeout: Double = 3
    /// The largest `--timeout` accepted, in seconds (about 31 years; larger values are a typo).
    public static let maximumTimeout: Double = 1_000_000_000

    /// Seconds to list for; 0 means until interrupted.
    public var timeout: Double
    /// Whether to print JSON lines instead of text.
    public var json: Bool
    /// Whether to list LocalSend devices too (on unless `--no-localsend`).
    public var localSend: Bool
    /// The options every command accepts (session, name, port, peers, interfaces, verbosity).
    public var global: GlobalOptions

    /// Creates the command; by default it lists for 3 seconds, as text.
    public init(
        timeout: Double = PeersCommand.defaultTimeout, json: Bool = false, localSend: Bool = true,
        global: GlobalOptions = .init()
    ) {
        self.timeout = timeout
        self.json = json
        self.localSend = localSend
        self.global = global
    }

    /// Builds the command from scanned values; throws `CLIError.usage` for a value that does not parse.
    public init(parsing values: ParsedValues) throws {
        self.init(
            timeout: try values.seconds("timeout") ?? Self.defaultTimeout,
            json: values.isSet("json"),
            localSend: !values.isSet("no-localsend"),
            global: try GlobalOptions(parsing: values)
        )
    }

    /// Throws `CLIError.usage` when `timeout` is negative or above `maximumTimeout`.
    public func validate() throws {
        guard timeout >= 0, timeout <= Self.maximumTimeout else {
            throw CLIError.usage(
                "--timeout: the timeout must be 0 to \(Int(Self.maximumTimeout)) seconds "
                    + "(got \(timeout.shortDescription))"
            )
        }
    }
}
