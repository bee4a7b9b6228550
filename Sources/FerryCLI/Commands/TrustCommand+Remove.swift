import FerryWire

extension TrustCommand {
    /// `ferry trust remove ID`: unpins a peer, named by its whole device ID or a unique prefix of it.
    public struct Remove: ParsableCommand, Equatable {
        /// The name, help text and argument of `ferry trust remove`.
        public static let configuration = CommandConfiguration(
            commandName: "remove",
            abstract: "Unpin a trusted peer.",
            arguments: [
                ArgumentDefinition(
                    "id",
                    help: "The peer's device ID, or its first \(minimumPrefix) characters or more when no other"
                        + " trusted peer's ID begins with them.")
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

        /// Throws `CLIError.usage` unless `target` is a device ID or at least `minimumPrefix` letters and digits.
        public func validate() throws {
            guard DeviceID(string: target) == nil else {
                return
            }
            let characters = target.unicodeScalars.filter { $0 != "-" && $0 != " " && $0 != "\t" }
            guard characters.count >= Self.minimumPrefix,
                characters.allSatisfy({ $0.isASCII && ($0.properties.isAlphabetic || ("0"..."9").contains($0)) })
            else {
                throw CLIError.usage(
                    "'\(TerminalText.excerpt(target))' is not a device ID nor the first \(Self.minimumPrefix) or more"
                        + " characters of one")
            }
        }

        /// Removes the one pinned peer `target` names; an unknown or ambiguous prefix fails and changes nothing.
        public func run(context: CommandContext) async throws -> ExitCode {
            let store = TrustStore(environment: context.environment)
            let shown = TerminalText.excerpt(target)
            let deviceID: DeviceID
            if let whole = DeviceID(string: target) {
                deviceID = whole
            } else {
                let matches = try store.entries(matching: target)
                guard let match = matches.first else {
                    throw CLIError.failure("no trusted peer's device ID begins with '\(shown)'; see 'ferry trust list'")
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
