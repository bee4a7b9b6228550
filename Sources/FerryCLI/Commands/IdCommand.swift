/// `ferry id`: shows who this install is: its device ID, the name it would announce, where its state lives.
///
/// The device ID is what a peer pins when it trusts this machine, so a person reads it out or pastes it into
/// `ferry trust add` on the other side; printing it must not need a network or a peer. Its run step is in
/// `IdCommand+Run.swift`.
public struct IdCommand: ParsableCommand, Equatable {
    /// The name, help text and options of `ferry id`.
    public static let configuration = CommandConfiguration(
        commandName: "id",
        abstract: "Show this install's device ID and display name.",
        discussion: """
            The device ID identifies this install to its peers; another machine pins it with 'ferry trust add \
            <id>'. It is created on first use and kept in the config directory ($XDG_CONFIG_HOME/ferry, else \
            ~/.config/ferry).
            """,
        options: [
            .flag("json", help: "Print one JSON object instead of text.")
        ]
    )

    /// Whether to print a JSON object instead of text.
    public var json: Bool
    /// The options every command accepts (session, name, port, peers, interfaces, verbosity).
    public var global: GlobalOptions

    /// Creates the command; text output unless `json`.
    public init(json: Bool = false, global: GlobalOptions = .init()) {
        self.json = json
        self.global = global
    }

    /// Builds the command from scanned values; throws `CLIError.usage` for a value that does not parse.
    public init(parsing values: ParsedValues) throws {
        self.init(json: values.isSet("json"), global: try GlobalOptions(parsing: values))
    }
}
