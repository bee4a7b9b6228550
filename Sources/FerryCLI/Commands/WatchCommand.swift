import FerryStateMachines

/// `ferry watch DIR (--to PEER... | --all)`: sends every new file that appears in a directory.
///
/// For a scanner, a camera upload folder or a build output: whatever lands in the directory goes to the peers,
/// once each, without anyone running `ferry send`. Files wait in a queue while a peer is away and go when it is
/// back. Its run step is in `WatchCommand+Run.swift`.
public struct WatchCommand: ParsableCommand, Equatable {
    /// The name, help text, argument and options of `ferry watch`.
    public static let configuration = CommandConfiguration(
        commandName: "watch",
        abstract: "Send every new file that appears in a directory to peers.",
        discussion: """
            Files already in the directory when ferry starts are not sent: only files that appear later, once \
            they are closed after writing or moved in. Each file is sent once; a file written again with \
            another size or time is sent again. Hidden names (.name), editor files (#name) and temporary files \
            (ending in ~, .tmp, .part, .swp or .crdownload) are skipped; subdirectories are not watched.

            A file written again replaces, at the receiver, the version this watch delivered there, once the new \
            one arrived whole and verified (until then the old one is there, whole). It never replaces a file \
            another peer sent or one changed at the receiver since it arrived: the new version is then kept \
            beside it as 'name (1).ext'. A receiver older than this version always keeps both.

            While a peer is away its files wait in a queue, sent in order when it is seen again. With --all, \
            every receiving peer that appears gets the files that appear after it. Runs until Ctrl-C (or \
            SIGTERM); when the directory is removed, moved away or unmounted, it says so and exits 1.

            Nobody is asked to compare pairing codes, so watch cannot tell a receiver from someone in between \
            who answers under its name; --trusted-only sends only to receivers this install has pinned (pin one \
            with 'ferry trust add NAME' while it runs 'ferry receive') and refuses every other one before \
            anything is offered to it. A name pinned here names the pinned device only, as for 'ferry send': \
            another device answering to it is named in a warning and gets nothing.
            """,
        arguments: [ArgumentDefinition("dir", help: "The directory to watch.")],
        options: OptionDefinition.peers(help: "Send to this peer (as for 'ferry send'). Repeatable.") + [
            .compress,
            .flag(
                "trusted-only",
                help: "Send only to trusted (pinned) receivers; refuse every other one before anything is sent."),
            .flag("json", help: "Print one JSON object per line for every event instead of text."),
        ]
    )

    /// The directory to watch, as given; only files that appear in it after the start are sent.
    public var directory: String
    /// The peers named with `--to`, by name, device ID or address.
    public var targets: [PeerTarget]
    /// `--all`: send to every receiving peer that appears, instead of named ones.
    public var all: Bool
    /// How chunks are compressed (`--compression`); `.auto` adapts the zstd level to the link and the CPU.
    public var compression: CompressionMode
    /// Refuse receivers that are not pinned (as `send --trusted-only`).
    public var trustedOnly: Bool
    /// Whether to print JSON lines for every event instead of text.
    public var json: Bool
    /// The options every command accepts (session, name, port, peers, interfaces, verbosity).
    public var global: GlobalOptions

    /// Creates the command with the defaults of the command line for what is not given.
    public init(
        directory: String, targets: [PeerTarget] = [], all: Bool = false, compression: CompressionMode = .auto,
        trustedOnly: Bool = false, json: Bool = false, global: GlobalOptions = .init()
    ) {
        self.directory = directory
        self.targets = targets
        self.all = all
        self.compression = compression
        self.trustedOnly = trustedOnly
        self.json = json
        self.global = global
    }

    /// Builds the command from scanned values; throws `CLIError.usage` for a value that does not parse.
    public init(parsing values: ParsedValues) throws {
        self.init(
            directory: values.arguments.first ?? "",
            targets: try values.peerTargets(),
            all: values.isSet("all"),
            compression: try values.compression(),
            trustedOnly: values.isSet("trusted-only"),
            json: values.isSet("json"),
            global: try GlobalOptions(parsing: values)
        )
    }

    /// Throws `CLIError.usage` for an empty directory, `--to` with `--all`, a peer named twice, or no peer at all.
    public func validate() throws {
        guard !directory.isEmpty else {
            throw CLIError.usage("<dir>: the directory must not be empty")
        }
        try SendCommand.validateTargets(targets, all: all)
        guard all || !targets.isEmpty else {
            throw CLIError.usage("no peer given: name peers with --to PEER, or send to every peer with --all")
        }
    }
}
