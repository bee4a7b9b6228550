/// The static description of a command: its name, what it does, and what it accepts.
///
/// The counterpart of swift-argument-parser's `CommandConfiguration` plus its property wrappers: everything help,
/// usage and parsing need is plain data here, declared once per command type.
public struct CommandConfiguration: Sendable {
    /// The word that selects the command: `peers` in `ferry peers`.
    public var commandName: String
    /// One line for `OVERVIEW:` and the root's `SUBCOMMANDS:` list.
    public var abstract: String
    /// Longer help after the overview; empty for none. Line breaks are kept; long lines are wrapped.
    public var discussion: String
    /// Positional arguments, in order.
    public var arguments: [ArgumentDefinition]
    /// The command's own options, in help order; the global options and `--help` are added by the parser.
    public var options: [OptionDefinition]

    public init(
        commandName: String,
        abstract: String,
        discussion: String = "",
        arguments: [ArgumentDefinition] = [],
        options: [OptionDefinition] = []
    ) {
        self.commandName = commandName
        self.abstract = abstract
        self.discussion = discussion
        self.arguments = arguments
        self.options = options
    }
}
