import FerryWire

extension TrustCommand {
    /// `ferry trust add ID [--name NAME]`: pins a peer, or renames a pinned one; `ferry trust add NAME` (or
    /// `--peer HOST:PORT`): finds a running `ferry receive`, compares the pairing code with it, and pins it.
    public struct Add: ParsableCommand, Equatable {
        /// The name, help text, argument and options of `ferry trust add`.
        public static let configuration = CommandConfiguration(
            commandName: "add",
            abstract: "Pin a peer's device ID as trusted.",
            discussion: """
                Given a device ID, pins it. Given a peer's name or the short ID ferry prints (ABCD-EFGH) instead (or \
                no argument and --peer HOST:PORT), \
                finds that peer while it runs 'ferry receive', connects, shows its device ID and the 6-digit \
                pairing code, which the receiver shows too, and pins it when you answer y: nobody has to copy an \
                ID by hand. That needs a terminal.

                A peer that only sends accepts no connections, so it cannot be found that way; but when it \
                connected to this install's 'ferry receive', which accepted the link and showed its code, its name \
                or short ID is enough here once no running peer answers to it within --wait: ferry shows its device \
                ID and the pairing code of that link (the one its screen showed when it sent) from \
                $XDG_CONFIG_HOME/ferry/recent-peers (the last 32 peers), and pins it under the name you typed when \
                you answer y. A running receiver takes the new pin within a second.

                Trust is one-way: each machine pins the other. On a first send, the sender's person compares the \
                code with the receiver's screen (or log) and answers a to pin the receiver; the receiver's person \
                answers a to its own question, or runs 'ferry trust add NAME' there. A side that pinned the other \
                still shows the code, so the other side can always compare.

                Adding an ID that is pinned already changes its name. A name belongs to one ID only: to give it \
                to another one, remove the old one first.

                With --localsend, the ID is a LocalSend device's fingerprint (64 hex digits: its app shows them \
                under About LocalSend, Debugging, Security), pinned as a LocalSend device: 'ferry receive --accept \
                trusted' then takes its files without a first question. A LocalSend device is also pinned by \
                answering a to the question 'ferry receive' asks about its first offer.
                """,
            arguments: [
                ArgumentDefinition(
                    "peer",
                    help: "The peer's device ID, as 'ferry id' prints it or in 64 hex digits; or the name or short ID"
                        + " (ABCD-EFGH) of a peer running 'ferry receive', or that connected to this install's.",
                    isOptional: true)
            ],
            options: [
                .option("name", valueName: "name", help: "The name to know the peer by.", default: "none"),
                .flag(
                    "localsend",
                    help: "The ID is a LocalSend device's fingerprint (64 hex digits); pin it as a LocalSend device."),
                .option(
                    "wait",
                    valueName: "seconds",
                    help: "How long to look for a peer given by name.",
                    default: SendCommand.defaultWait.shortDescription),
            ]
        )

        /// The ID to pin; nil to find the peer on the network (by `peerName`, or at the `--peer` address).
        public var deviceID: DeviceID?
        /// The display name (or ID prefix) of the peer to find, when pinning over the network.
        public var peerName: String?
        /// The name to pin under; `nil` keeps the current one (none for a new peer; the peer's display name when
        /// found on the network).
        public var name: String?
        /// Seconds to look for the peer.
        public var wait: Double
        /// Whether `deviceID` is a LocalSend device's fingerprint, pinned with kind `localsend`.
        public var localSend = false
        /// The options every command accepts (session, name, port, peers, interfaces, verbosity).
        public var global: GlobalOptions

        /// Pins `deviceID` as given, under `name` (nil keeps the current name), without looking on the network.
        public init(deviceID: DeviceID, name: String? = nil, global: GlobalOptions = .init()) {
            self.deviceID = deviceID
            self.peerName = nil
            self.name = name
            self.wait = SendCommand.defaultWait
            self.global = global
        }

        /// Pins a peer found on the network: by `peerName`, or (nil) the one at the `--peer` address.
        public init(
            peerName: String?, name: String? = nil, wait: Double = SendCommand.defaultWait,
            global: GlobalOptions = .init()
        ) {
            self.deviceID = nil
            self.peerName = peerName
            self.name = name
            self.wait = wait
            self.global = global
        }

        /// Builds the command from scanned values: a device ID pins it, other text names a peer to find on the network,
        /// no argument needs `--peer`. Throws `CLIError.usage` for a mistyped ID or a value that does not parse.
        public init(parsing values: ParsedValues) throws {
            // `--name` is also the global display-name option, whose validation (1 to 64 bytes, no control
            // characters) applies to it here as well.
            let global = try GlobalOptions(parsing: values)
            let wait = try values.seconds("wait") ?? SendCommand.defaultWait
            guard let text = values.arguments.first else {
                // A LocalSend device is pinned by its fingerprint only: there is no code to compare over the network.
                guard !values.isSet("localsend") else {
                    throw CLIError.usage(
                        "--localsend takes the device's fingerprint: ferry trust add --localsend HEX (the 64 hex digits"
                            + " its app shows under About LocalSend, Debugging, Security); LocalSend devices are not"
                            + " paired over the network")
                }
                guard !global.peers.isEmpty else {
                    throw CLIError.usage(
                        "give the peer's device ID, or its name to find it on the network (or --peer HOST:PORT); a"
                            + " LocalSend device by its fingerprint: ferry trust add --localsend HEX")
                }
                self.init(peerName: nil, name: values.last("name"), wait: wait, global: global)
                return
            }
            if values.isSet("localsend") {
                // A LocalSend fingerprint is hex as every app shows it; ferry's grouped base32 form is a ferry ID.
                guard text.utf8.count == DeviceID.length * 2, Hex.bytes(text.utf8) != nil,
                    let deviceID = DeviceID(string: text)
                else {
                    throw CLIError.usage(
                        "'\(TerminalText.excerpt(text))' is not a LocalSend fingerprint; give the 64 hex digits the"
                            + " app shows (About LocalSend, Debugging, Security)")
                }
                self.init(deviceID: deviceID, name: values.last("name"), global: global)
                localSend = true
            } else if let deviceID = DeviceID(string: text) {
                self.init(deviceID: deviceID, name: values.last("name"), global: global)
            } else if Self.isShortID(text) {
                // The short ID ferry prints everywhere (`FVQN-OCPD`): the start of the device ID of a peer to find on
                // the network, as `--to` takes it; the codes are compared before it is pinned.
                self.init(peerName: text, name: values.last("name"), wait: wait, global: global)
            } else if values.last("name") != nil || Self.looksLikeID(text) {
                // `trust add ID --name N` with a mistyped ID: the ID is wrong, not a peer to look for.
                throw TrustCommand.invalidID(text)
            } else {
                _ = try PeerTarget.parse(text, option: "peer")
                self.init(peerName: text, name: nil, wait: wait, global: global)
            }
        }

        /// Throws `CLIError.usage` when `wait` is negative or above `SendCommand.maximumWait`.
        public func validate() throws {
            guard wait >= 0, wait <= SendCommand.maximumWait else {
                let most = Int(SendCommand.maximumWait)
                throw CLIError.usage("--wait: the wait must be 0 to \(most) seconds (got \(wait.shortDescription))")
            }
        }

        /// The short form of a device ID that ferry prints (`FVQN-OCPD`, `DeviceID.shortDescription`): 2 to 4 groups
        /// of 4 capital letters and digits. More groups are a device ID typed wrong, not the start of one.
        static func isShortID(_ text: String) -> Bool {
            let groups = text.split(separator: "-", omittingEmptySubsequences: false)
            return (2...4).contains(groups.count)
                && groups.allSatisfy {
                    $0.count == 4 && $0.allSatisfy { $0.isASCII && ($0.isUppercase || $0.isNumber) }
                }
        }

        /// Whether the peer found for `target` (what the person typed) may be pinned as it: always for a name, and for
        /// a short ID only when the peer's device ID begins with it. Display names are matched first and any peer may
        /// call itself `FVQN-OCPD`: the name alone must not stand for the key.
        static func answersTo(_ target: String, deviceID: DeviceID) -> Bool {
            !isShortID(target) || deviceID.description.uppercased().hasPrefix(target.uppercased())
        }

        /// Text made like a device ID (groups of 4 letters and digits, or 64 characters of hex-like text), which a
        /// display name hardly ever is.
        static func looksLikeID(_ text: String) -> Bool {
            let groups = text.split(separator: "-")
            if groups.count >= 2,
                groups.allSatisfy({ $0.count == 4 && $0.allSatisfy { $0.isASCII && !$0.isLowercase } })
            {
                return true
            }
            return text.count >= 52 && text.allSatisfy { $0.isASCII && ($0.isLetter || $0.isNumber) }
        }

        /// Pins the peer and says what changed.
        public func run(context: CommandContext) async throws -> ExitCode {
            guard let deviceID else {
                return try await pairOverNetwork(context: context)
            }
            let store = TrustStore(environment: context.environment)
            let kind: TrustedPeer.Kind? = localSend ? .localsend : nil
            let existing = try store.entry(for: deviceID)
            if name == nil, let existing, kind == nil || existing.kind == kind {
                context.stdout.writeLine("Already trusted: \(TrustCommand.label(existing)).")
                return .success
            }
            let name = self.name ?? existing?.name ?? ""
            let pinned = TrustedPeer(
                deviceID: deviceID, name: name, added: .now, kind: kind ?? existing?.kind ?? .ferry,
                alias: existing?.alias)
            switch try store.pin(deviceID, name: name, kind: kind) {
            case nil:
                context.stdout.writeLine("Trusted \(TrustCommand.label(pinned)).")
            case let previous? where previous.kind != pinned.kind:
                context.stdout.writeLine("Trusted \(TrustCommand.label(pinned)), now as a LocalSend device.")
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
