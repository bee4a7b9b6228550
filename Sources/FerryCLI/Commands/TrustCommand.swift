import FerryWire

/// `ferry trust`: the peers this install trusts, pinned by device ID (`list`, `add`, `remove`).
///
/// A group: it only selects one of its subcommands, which are nested types in `TrustCommand+List.swift`,
/// `+Add.swift` and `+Remove.swift`. Pinning is what lets `ferry receive --accept trusted` run unattended, and what
/// refuses a peer that shows up under a trusted name with another key, so the commands show the whole device ID and
/// never let a name move silently to another one.
public struct TrustCommand: ParsableCommand, Equatable {
    /// The name, help text and subcommands (`list`, `add`, `remove`) of `ferry trust`.
    public static let configuration = CommandConfiguration(
        commandName: "trust",
        abstract: "List, pin and unpin the peers this install trusts.",
        discussion: """
            A trusted peer is pinned by its device ID (what 'ferry id' prints on its machine), under a name that \
            belongs to it alone: giving the name to another ID takes a 'remove' first, so a new key never takes \
            over a trusted name silently. The list is kept in $XDG_CONFIG_HOME/ferry/trusted-peers (else \
            ~/.config/ferry).
            """,
        subcommands: [List.self, Add.self, Remove.self]
    )

    /// The options every command accepts (session, name, port, peers, interfaces, verbosity).
    public var global: GlobalOptions

    /// Creates the group; it only selects a subcommand.
    public init(global: GlobalOptions = .init()) {
        self.global = global
    }

    /// Builds the command from scanned values; throws `CLIError.usage` for a value that does not parse.
    public init(parsing values: ParsedValues) throws {
        self.init(global: try GlobalOptions(parsing: values))
    }

    /// Never reached: the parser asks for a subcommand of a group.
    public func run(context: CommandContext) async throws -> ExitCode {
        throw CLIError.usage("Missing subcommand; choose one of: list, add, remove")
    }

    /// `alice-laptop (AAAQ-EAYE-...)`, or the ID alone for a peer pinned without a name; the name escaped. A
    /// LocalSend device shows its fingerprint as the app does: `'Nice Orange' (LocalSend 247E5F...)`.
    static func label(_ peer: TrustedPeer) -> String {
        let id = peer.localSendFingerprint.map { "LocalSend \($0)" } ?? "\(peer.deviceID)"
        return peer.name.isEmpty ? id : "'\(TerminalText.escape(peer.name))' (\(id))"
    }

    /// The peer as `--json` shows it: `{"event":"trustedPeer","deviceID":...,"hex":...,"name":...,"added":...}`,
    /// the same first keys as `ferry id --json` (an `identity` event), so that one reader takes both.
    /// Then `kind` ("ferry" or "localsend"), and for a LocalSend device its `fingerprint` as the app shows it and
    /// the `alias` it had when pinned (null when pinned by `trust add`).
    static func json(_ peer: TrustedPeer) -> JSONLine {
        var line = JSONLine(
            event: JSONEvents.TrustList.trustedPeer,
            [
                "deviceID": .string(peer.deviceID.description),
                "hex": .string(peer.deviceID.hex),
                "name": .string(peer.name),
                "added": .string(peer.added.formatted(.iso8601)),
                "kind": .string(peer.kind.rawValue),
            ])
        if let fingerprint = peer.localSendFingerprint {
            line.append("fingerprint", .string(fingerprint))
            line.append("alias", peer.alias.map { .string($0) } ?? .null)
        }
        return line
    }

    /// Whether peer-chosen `text` (a LocalSend alias) could be taken for a device ID or the start of one where a
    /// command takes either: grouped as ferry's IDs are (`FVQN-OCPD`, either case), 52 letters and digits or more, or
    /// `Remove.minimumPrefix` hex digits or more (the start of a fingerprint as a LocalSend app shows it).
    static func looksLikeIDOrPrefix(_ text: String) -> Bool {
        let upper = text.uppercased()
        if Add.isShortID(upper) || Add.looksLikeID(upper) { return true }
        let digits = text.unicodeScalars.filter { $0 != "-" && $0 != " " && $0 != "\t" }
        return digits.count >= Remove.minimumPrefix && digits.allSatisfy { $0.properties.isASCIIHexDigit }
    }

    /// The usage error for text that is not a device ID.
    static func invalidID(_ text: String) -> CLIError {
        .usage(
            "'\(TerminalText.excerpt(text))' is not a valid device ID; give the grouped form 'ferry id' prints"
                + " (13 groups of 4) or 64 hex digits")
    }
}
