extension TrustCommand {
    /// `ferry trust list`: the pinned peers, oldest first, as a table or as JSON lines.
    public struct List: ParsableCommand, Equatable {
        /// The name, help text and options of `ferry trust list`.
        public static let configuration = CommandConfiguration(
            commandName: "list",
            abstract: "List the trusted peers.",
            options: [
                .flag("json", help: "Print one JSON object per line instead of text.")
            ]
        )

        /// Whether to print JSON lines instead of text.
        public var json: Bool
        /// The options every command accepts (session, name, port, peers, interfaces, verbosity).
        public var global: GlobalOptions

        /// Creates the command; a table unless `json`.
        public init(json: Bool = false, global: GlobalOptions = .init()) {
            self.json = json
            self.global = global
        }

        /// Builds the command from scanned values; throws `CLIError.usage` for a value that does not parse.
        public init(parsing values: ParsedValues) throws {
            self.init(json: values.isSet("json"), global: try GlobalOptions(parsing: values))
        }

        /// Prints one line per pinned peer; with none, a hint on stderr (text) or nothing (JSON).
        public func run(context: CommandContext) async throws -> ExitCode {
            let peers = try TrustStore(environment: context.environment).load()
            if json {
                for peer in peers {
                    context.stdout.writeLine(TrustCommand.json(peer).text)
                }
                return .success
            }
            guard !peers.isEmpty else {
                context.stderr.writeLine("No trusted peers; pin one with 'ferry trust add <id> --name <name>'.")
                return .success
            }
            let names = peers.map { $0.name.isEmpty ? "-" : TerminalText.escape($0.name) }
            let width = max("NAME".count, names.map(\.count).max() ?? 0)
            func pad(_ text: String, _ width: Int) -> String {
                text + String(repeating: " ", count: max(0, width - text.count))
            }
            // A LocalSend device: its fingerprint as the app shows it, and its alias when that is not its name.
            var text = "\(pad("NAME", width))  \(pad("KIND", 9))  ADDED       DEVICE ID\n"
            for (peer, name) in zip(peers, names) {
                let day = peer.added.formatted(.iso8601.year().month().day())
                let kind = peer.kind == .localsend ? "LocalSend" : "ferry"
                var id = peer.localSendFingerprint ?? "\(peer.deviceID)"
                if let alias = peer.alias, alias != peer.name {
                    id += "  alias '\(TerminalText.escape(alias))'"
                }
                text += "\(pad(name, width))  \(pad(kind, 9))  \(day)  \(id)\n"
            }
            context.stdout.write(text)
            return .success
        }
    }
}
