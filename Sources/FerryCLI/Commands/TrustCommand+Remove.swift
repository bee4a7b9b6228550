import FerryWire

extension TrustCommand {
    /// `ferry trust remove ID|NAME`: unpins a peer, named as `trust add` names it: its whole device ID, the name it is
    /// pinned under, or a unique prefix of its ID (the short ID ferry prints, `FVQN-OCPD`; a LocalSend device's
    /// fingerprint as its app shows it, `247E5F0A`); a LocalSend device also by its alias.
    public struct Remove: ParsableCommand, Equatable {
        /// The name, help text and argument of `ferry trust remove`.
        public static let configuration = CommandConfiguration(
            commandName: "remove",
            abstract: "Unpin a trusted peer.",
            arguments: [
                ArgumentDefinition(
                    "peer",
                    help: "The peer's device ID, the name it is pinned under ('ferry trust list'), or the first"
                        + " \(minimumPrefix) characters or more of its ID when no other trusted peer's ID begins with"
                        + " them; a LocalSend device also by its fingerprint (or its first \(minimumPrefix) hex digits"
                        + " or more) or its alias.")
            ]
        )

        /// The fewest characters (without '-') of a device ID that `remove` accepts instead of all of it.
        public static let minimumPrefix = 8

        /// The ID or prefix as typed.
        public var target: String
        /// The options every command accepts (session, name, port, peers, interfaces, verbosity).
        public var global: GlobalOptions

        /// Creates the command for `target`, a device ID or a prefix of one, unchecked until `validate()`.
        public init(target: String, global: GlobalOptions = .init()) {
            self.target = target
            self.global = global
        }

        /// Builds the command from scanned values; a missing ID is left empty for `validate()` to reject.
        public init(parsing values: ParsedValues) throws {
            self.init(target: values.arguments.first ?? "", global: try GlobalOptions(parsing: values))
        }

        /// Throws `CLIError.usage` when `target` is empty (any other text may be the name a peer is pinned under).
        public func validate() throws {
            guard !target.isEmpty else {
                throw CLIError.usage("give the trusted peer's device ID, or the name it is pinned under")
            }
        }

        /// Whether `target` can be the start of a device ID: `minimumPrefix` letters and digits or more ('-' and
        /// spaces aside).
        var isUsablePrefix: Bool {
            let characters = target.unicodeScalars.filter { $0 != "-" && $0 != " " && $0 != "\t" }
            return characters.count >= Self.minimumPrefix
                && characters.allSatisfy({ $0.isASCII && ($0.properties.isAlphabetic || ("0"..."9").contains($0)) })
        }

        /// Removes the one pinned peer `target` names: a whole device ID, else the name it is pinned under, else a
        /// LocalSend device's alias, else a unique prefix of its ID. An unknown name, an alias two devices share or
        /// that also begins another pinned device's ID, or an unknown or ambiguous prefix fails and changes nothing.
        public func run(context: CommandContext) async throws -> ExitCode {
            let store = TrustStore(environment: context.environment)
            let shown = TerminalText.excerpt(target)
            let deviceID: DeviceID
            if let whole = DeviceID(string: target) {
                deviceID = whole
            } else if let named = try store.entry(named: target) {
                deviceID = named.deviceID
            } else if case let aliased = try store.entries(alias: target), !aliased.isEmpty {
                guard aliased.count == 1 else {
                    throw CLIError.failure(
                        "\(aliased.count) trusted LocalSend devices have the alias '\(shown)': "
                            + aliased.map(TrustCommand.label).joined(separator: ", ")
                            + "; give the fingerprint of the one to remove")
                }
                // An alias is the device's own choice: one that also begins another pinned device's ID could
                // otherwise remove the device that chose it instead of the one whose ID was typed.
                let prefixed = isUsablePrefix ? try store.entries(matching: target) : []
                if let other = prefixed.first(where: { $0.deviceID != aliased[0].deviceID }) {
                    throw CLIError.failure(
                        "'\(shown)' is ambiguous: the alias of \(TrustCommand.label(aliased[0])) and the start of the"
                            + " device ID of \(TrustCommand.label(other)); give the whole fingerprint or device ID")
                }
                deviceID = aliased[0].deviceID
            } else {
                let matches = isUsablePrefix ? try store.entries(matching: target) : []
                guard let match = matches.first else {
                    throw CLIError.failure(
                        isUsablePrefix
                            ? "no trusted peer is named '\(shown)' nor has a device ID that begins with it; see 'ferry"
                                + " trust list'"
                            : "no trusted peer is named '\(shown)'; see 'ferry trust list' (a device ID is given whole,"
                                + " or by its first \(Self.minimumPrefix) characters or more)")
                }
                guard matches.count == 1 else {
                    throw CLIError.failure(
                        "'\(shown)' begins \(matches.count) trusted device IDs: "
                            + matches.map(TrustCommand.label).joined(separator: ", ") + "; give more characters")
                }
                deviceID = match.deviceID
            }
            guard let removed = try store.remove(deviceID) else {
                throw CLIError.failure("\(deviceID) is not trusted; see 'ferry trust list'")
            }
            context.stdout.writeLine("No longer trusted: \(TrustCommand.label(removed)).")
            return .success
        }
    }
}
