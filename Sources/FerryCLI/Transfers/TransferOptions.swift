import FerryStateMachines

/// The options `ferry send` and `ferry watch` share: who gets the files, and how they are compressed.
extension OptionDefinition {
    static func peers(help: String) -> [OptionDefinition] {
        [
            .repeating("to", valueName: "peer", help: help),
            .flag("all", help: "Send to every receiving peer found."),
        ]
    }

    static let compress = OptionDefinition.option(
        "compress",
        valueName: "mode",
        help: "Compress where it pays (auto), always try zlib or zstd, or never (none).",
        default: CompressionMode.auto.rawValue,
        values: CompressionMode.allCases.map(\.rawValue)
    )
}

extension ParsedValues {
    /// Every `--to`, parsed.
    func peerTargets() throws -> [PeerTarget] {
        try all("to").map { text throws(CLIError) in try PeerTarget.parse(text) }
    }

    /// `--compress`, `auto` when absent.
    func compression() throws -> CompressionMode {
        try choice("compress", as: "compression mode") ?? .auto
    }
}
