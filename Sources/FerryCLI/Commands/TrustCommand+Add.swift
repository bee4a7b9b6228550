import FerryWire

extension TrustCommand {
    /// `ferry trust add ID [--name NAME]`: pins a peer, or renames a pinned one.
    public struct Add: ParsableCommand, Equatable {
        public static let configuration = CommandConfiguration(
            commandName: "add",
            abstract: "Pin a peer's device ID as trusted.",
            discussion: """
                Adding an ID that is pinned already changes its name. A name belongs to one ID only: to give it \
                to another one, remove the old one first.
                """,
            arguments: [
                ArgumentDefinition("id", help: "The peer's device ID, as 'ferry id' prints it or in 64 hex digits.")
            ],
            options: [
                .option("name", valueName: "name", help: "The name to know the peer by.", default: "none")
            ]
        )

        public var deviceID: DeviceID
        /// The name to pin under; `nil` keeps the current one (none for a new peer).
        public var name: String?
        public var global: GlobalOptions

        public init(deviceID: DeviceID, name: String? = nil, global: GlobalOptions = .init()) {
            self.deviceID = deviceID
            self.name = name
            self.global = global
        }

        public init(parsing values: ParsedValues) throws {
            let text = values.arguments.first ?? ""
            guard let deviceID = DeviceID(string: text) else {
                throw TrustCommand.invalidID(text)
            }
            // `--name` is also the global display-name option, whose validation (1 to 64 bytes, no control
            // characters) applies to it here as well.
            self.init(deviceID: deviceID, name: values.last("name"), global: try GlobalOptions(parsing: values))
        }

        /// Pins the peer and says what changed.
        public func run(context: CommandContext) async throws -> ExitCode {
            let store = TrustStore(environment: context.environment)
            if name == nil, let existing = try store.entry(for: deviceID) {
                context.stdout.writeLine("Already trusted: \(TrustCommand.label(existing)).")
                return .success
            }
            let name = self.name ?? ""
            let pinned = TrustedPeer(deviceID: deviceID, name: name, added: .now)
            switch try store.pin(deviceID, name: name) {
            case nil:
                context.stdout.writeLine("Trusted \(TrustCommand.label(pinned)).")
            case let previous? where previous.name == name:
                context.stdout.writeLine("Already trusted: \(TrustCommand.label(previous)).")
            case let previous?:
                let old = previous.name.isEmpty ? "no name" : "'\(TerminalText.escape(previous.name))'"
                context.stdout.writeLine("Renamed \(deviceID) from \(old) to '\(TerminalText.escape(name))'.")
            }
            return .success
        }
    }
}
