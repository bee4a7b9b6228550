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
    /// Commands under this one (`ferry trust add`); a command with subcommands is a group and never runs itself.
    public var subcommands: [any ParsableCommand.Type]

    /// A command's description; everything but the name and the abstract defaults to none.
    public init(
        commandName: String,
        abstract: String,
        discussion: String = "",
        arguments: [ArgumentDefinition] = [],
        options: [OptionDefinition] = [],
        subcommands: [any ParsableCommand.Type] = []
    ) {
        self.commandName = commandName
        self.abstract = abstract
        self.discussion = discussion
        self.arguments = arguments
        self.options = options
        self.subcommands = subcommands
    }

    /// The subcommand called `name`, if there is one.
    public func subcommand(named name: String) -> (any ParsableCommand.Type)? {
        subcommands.first { $0.configuration.commandName == name }
    }
}
