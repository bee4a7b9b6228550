import FerryStateMachines

/// `ferry send FILE... (--to PEER... | --all)`: sends files to peers of the session.
///
/// The command a user types most: name the files and who gets them, watch the bars, read the summary. Peers are
/// found by discovery (or reached at an address), connected to, and sent one transfer (a broadcast when there
/// are several: each chunk is read and compressed once). Its run step is in `SendCommand+Run.swift`.
public struct SendCommand: ParsableCommand, Equatable {
    /// The name, help text, arguments and options of `ferry send`.
    public static let configuration = CommandConfiguration(
        commandName: "send",
        abstract: "Send files to peers of the session.",
        discussion: """
            The files go to every peer named with --to, once it is discovered and has accepted the connection; a \
            directory is sent whole, its empty folders included. A PEER is a display name, the start of a device \
            ID or peer ID (at least 4 characters), or an IP address and port (HOST:PORT; host names are not \
            looked up). A display name is what a peer calls itself, so anyone can take one; a name pinned here \
            ('ferry trust add') names the \
            pinned device only. When another device answers to it too, the files go to the pinned one and a \
            warning names the other (its short device ID and address). When only another device answers to it, \
            nothing goes to that one, with or without --trusted-only and without asking about a code (its key is \
            not the one pinned under the name): ferry says so and waits for the pinned device until --wait runs \
            out.

            With --all, the files go to every receiving peer found: ferry waits until 2.5 s pass with no new \
            peer after the first one (at most --wait seconds), then sends to all of them at once. With neither, \
            on a terminal, a picker lists the peers as they are found.

            On a terminal, before anything is offered to a receiver this install has not pinned, ferry shows the \
            6-digit pairing code of the link and asks whether the receiver shows the same: y sends, a sends and \
            trusts the receiver from now on, anything else (or no answer within a minute) sends nothing to it. \
            Trusted receivers are not asked. Without a terminal nobody is asked, so a script cannot tell the \
            receiver from someone in between who answers under its name; --trusted-only refuses every receiver \
            that is not pinned (pin one with 'ferry trust add NAME' while it runs 'ferry receive'). On a terminal, \
            until a receiver answers the offer, a line says that ferry waits for it to accept (a person asked there \
            has 60 s to answer, unless its --ask-timeout says otherwise).

            With --text, a short text (at most 64 KiB of UTF-8) goes too, as a message that ferry receive \
            prints with the sender's name (it keeps it as a file only when it was started with --into); it may \
            be sent alone or with files.

            To several receivers at once, a send is a broadcast: ferry gives each receiver part of the chunks and \
            the receivers pass them on to each other, so the sender's link carries about one copy whatever their \
            number. A receiver checks every chunk against the digest ferry sent it and cannot change a byte \
            unnoticed; one that passes on a bad chunk is cut off and named. The summary says how much ferry sent \
            itself and how much the receivers relayed. --no-relay sends every chunk to every receiver directly.

            --as NAME sends the one FILE given under NAME instead of its own (a folder: its files go under NAME/); \
            the receiver sees only NAME. With several FILEs it is refused: it names one.

            A FILE of - sends standard input, under the name given with --as (stdin by default): ferry reads it \
            to its end first (an offer names each file's size), into a temporary file in $TMPDIR (else /tmp) that \
            is unlinked as soon as it is created, so nothing is left behind however ferry ends; it says so on stderr when \
            the input is large. - may be given once, beside other files. Read from a terminal, the input ends \
            with Ctrl-D; an empty input sends an empty file (and says so). When standard input is a pipe and \
            stderr a terminal, the picker and the pairing-code question read the terminal (/dev/tty).

            Each file is hashed as it is sent (a SHA-256 of every chunk). For a file of 4 MiB or more the digests \
            are kept in $XDG_CACHE_HOME/ferry/digests (else ~/.cache/ferry/digests; the 4096 last used), so \
            sending it again unchanged (the same inode, size, modification and change time) reads it without \
            hashing it; receivers still check every chunk. --rehash hashes every file anyway (and keeps the new \
            digests).

            LocalSend apps (phones, other desktops) are receivers too, unless --no-localsend: --to takes a \
            LocalSend device's alias or the start of its fingerprint (a name that both a ferry peer and a \
            LocalSend device answer to is refused as ambiguous; a name pinned here names that device only), or \
            HOST:53317; --all includes every LocalSend device heard, each sent to by its own upload. The \
            receiver's certificate must hash to the fingerprint it announced (or, for HOST:53317 no verified \
            announcement names, to a pinned one) before a request byte is written, \
            HTTPS only. A receiver not pinned here is asked about on a terminal: ferry shows what the app's Verify \
            page shows (Text), and a pins it (as 'ferry trust add --localsend FINGERPRINT' does); without a terminal, \
            a discovered device is sent to, a bare address is refused, and --trusted-only refuses both. A PIN the \
            receiver asks for comes from --pin-file FILE (given only to a receiver that asks), or is asked on the \
            terminal without echo, one prompt at a time (never on the command line). A file changed after it was \
            hashed fails; a file the receiver declined counts as not arrived. Folders keep their relative paths in the names sent; empty folders are not sent to \
            LocalSend receivers; --text arrives as a message in the app.

            Exit status: 0 when every file reached every peer, 1 otherwise, 130 when interrupted.
            """,
        arguments: [
            ArgumentDefinition(
                "file", help: "A file or directory to send; - for standard input.", isOptional: true,
                isRepeating: true)
        ],
        options: OptionDefinition.peers(help: "Send to this peer. Repeatable.") + [
            .option(
                "wait",
                valueName: "seconds",
                help: "How long to look for the peers before giving up.",
                default: defaultWait.shortDescription
            ),
            .option(
                "as", valueName: "name",
                help: "The name standard input (-) is sent under; without -, the name the one FILE (or folder) is"
                    + " sent under.",
                default: defaultStandardInputName),
            .compress,
            .flag(
                "trusted-only",
                help: "Send only to trusted (pinned) receivers; refuse every other one before anything is sent."),
            .option("text", valueName: "text", help: "Send this short text as a message (at most 64 KiB)."),
            .flag(
                "no-relay",
                help: "To several receivers, send each one every chunk directly; they pass nothing on to each other."),
            .flag(
                "rehash",
                help: "Hash every file again instead of using the digests kept from an earlier send (then keep "
                    + "the new ones)."),
            .flag("no-localsend", help: "Do not look for LocalSend devices nor send to them."),
            .option(
                "pin-file", valueName: "file",
                help: "The PIN a LocalSend receiver asks for, in FILE's first line (a file others can read is refused)."
            ),
            .flag("json", help: "Print one JSON object per line for every event instead of text."),
        ]
    )

    /// The FILE that stands for standard input.
    public static let standardInput = "-"
    /// The name standard input is sent under without `--as`.
    public static let defaultStandardInputName = "stdin"

    /// The default of `--wait`, in seconds.
    public static let defaultWait: Double = 10
    /// The largest `--wait` accepted, in seconds (one day).
    public static let maximumWait: Double = 86_400
    /// With `--all`: how long no new peer must appear, after the first, before sending. Longer than the longest
    /// gap between two announcements of a receiver (the 2 s announce interval, +20% jitter), so that every receiver
    /// of the session is heard at least once in it even when its answer to our query came late or was lost; with
    /// one second, a receiver slowed down on a loaded machine was left out.
    public static let allQuietPeriod = Duration.milliseconds(2500)

    /// The paths of the files to send; `-` stands for standard input.
    public var files: [String]
    /// The peers named with `--to`, by name, device ID or address.
    public var targets: [PeerTarget]
    /// `--all`: send to every peer of the session that is heard within the wait, instead of named ones.
    public var all: Bool
    /// Seconds to look for the peers.
    public var wait: Double
    /// How chunks are compressed (`--compression`); `.auto` adapts the zstd level to the link and the CPU.
    public var compression: CompressionMode
    /// The name standard input is sent under (`--as`); nil when not given.
    public var standardInputName: String?
    /// Refuse receivers that are not pinned, instead of asking about (or, headless, trusting) their code.
    public var trustedOnly: Bool
    /// Whether to print JSON lines for every event instead of text.
    public var json: Bool
    /// A text message to send (`--text`), with the files or alone.
    public var text: String?
    /// Whether receivers of a broadcast pass chunks on to each other (false: `--no-relay`, every chunk goes to every
    /// receiver from here).
    public var relay: Bool
    /// Whether the chunk digests kept from earlier sends of an unchanged file are used (false: `--rehash`).
    public var usesKeptDigests: Bool
    /// Whether LocalSend devices are looked for and sent to (false: `--no-localsend`).
    public var localSend: Bool
    /// `--pin-file`: where the PIN for LocalSend receivers is; nil when not given (asked on a terminal).
    public var pinFile: String?
    /// The options every command accepts (session, name, port, peers, interfaces, verbosity).
    public var global: GlobalOptions

    /// Creates the command with the defaults of the command line for what is not given.
    public init(
        files: [String], targets: [PeerTarget] = [], all: Bool = false, wait: Double = SendCommand.defaultWait,
        compression: CompressionMode = .auto, standardInputName: String? = nil, trustedOnly: Bool = false,
        json: Bool = false, text: String? = nil, relay: Bool = true, usesKeptDigests: Bool = true,
        localSend: Bool = true, pinFile: String? = nil, global: GlobalOptions = .init()
    ) {
        self.localSend = localSend
        self.pinFile = pinFile
        self.usesKeptDigests = usesKeptDigests
        self.text = text
        self.relay = relay
        self.files = files
        self.targets = targets
        self.all = all
        self.wait = wait
        self.compression = compression
        self.standardInputName = standardInputName
        self.trustedOnly = trustedOnly
        self.json = json
        self.global = global
    }

    /// Builds the command from scanned values; throws `CLIError.usage` for a value that does not parse.
    public init(parsing values: ParsedValues) throws {
        self.init(
            files: values.arguments,
            targets: try values.peerTargets(),
            all: values.isSet("all"),
            wait: try values.seconds("wait") ?? Self.defaultWait,
            compression: try values.compression(),
            standardInputName: values.last("as"),
            trustedOnly: values.isSet("trusted-only"),
            json: values.isSet("json"),
            text: values.last("text"),
            relay: !values.isSet("no-relay"),
            usesKeptDigests: !values.isSet("rehash"),
            localSend: !values.isSet("no-localsend"),
            pinFile: values.last("pin-file"),
            global: try GlobalOptions(parsing: values)
        )
    }

    /// Checks the text, the targets (`--to` or `--all`), standard input and `--wait`; throws `CLIError.usage`.
    public func validate() throws {
        try Self.validateText(text, files: files)
        try Self.validateTargets(targets, all: all)
        try Self.validateStandardInput(files, name: standardInputName)
        if !localSend, pinFile != nil {
            throw CLIError.usage("--no-localsend sends to no LocalSend device; --pin-file is for LocalSend receivers")
        }
        guard wait >= 0, wait <= Self.maximumWait else {
            throw CLIError.usage(
                "--wait: the wait must be 0 to \(Int(Self.maximumWait)) seconds (got \(wait.shortDescription))")
        }
    }

    /// `-` at most once; `--as` names standard input when `-` is given, else the one FILE sent (a file, or a folder
    /// whose files then go under that name), and must be a name a receiver takes.
    static func validateStandardInput(_ files: [String], name: String?) throws(CLIError) {
        let count = files.filter { $0 == standardInput }.count
        if count > 1 {
            throw .usage("'-' (standard input) is given \(count) times; it can be sent once")
        }
        guard let name else { return }
        if files.isEmpty {
            throw .usage("--as names a FILE sent, or standard input (-); a --text message has no name to give")
        }
        if count == 0, files.count != 1 {
            throw .usage(
                "--as renames the one FILE sent (or standard input, -); \(files.count) files are given: send them"
                    + " one by one to rename each, or without --as")
        }
        if case .failure(let error) = NameValidator.components(of: name) {
            throw .usage("--as: '\(TerminalText.excerpt(name))' cannot be sent as a name: \(error)")
        }
    }

    /// `--to` and `--all` exclude each other; the same peer twice is a typo.
    static func validateTargets(_ targets: [PeerTarget], all: Bool) throws(CLIError) {
        if all, !targets.isEmpty {
            throw .usage("--to and --all cannot be combined; name peers with --to, or send to every peer with --all")
        }
        var seen = Set<PeerTarget>()
        for target in targets where !seen.insert(target).inserted {
            throw .usage("--to: '\(target)' is given twice")
        }
    }
}
