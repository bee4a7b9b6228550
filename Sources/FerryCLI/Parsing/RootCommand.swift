/// The top of a command tree: the tool's name, version and help, and its subcommands.
///
/// `FerryCommand.root` is the real `ferry`; tests build their own roots around test commands so that the
/// framework (parsing, help, errors, exit codes) can be exercised without running any network code.
public struct RootCommand: Sendable {
    /// The executable's name as help shows it: `ferry`.
    public var commandName: String
    /// Printed by `--version` after the name.
    public var version: String
    /// One line for the `OVERVIEW:` of the root help.
    public var abstract: String
    /// Longer help after the overview; empty for none.
    public var discussion: String
    /// The subcommands, in help order.
    public var subcommands: [any ParsableCommand.Type]

    /// A root over `subcommands`, listed in help in this order.
    public init(
        commandName: String,
        version: String,
        abstract: String,
        discussion: String = "",
        subcommands: [any ParsableCommand.Type]
    ) {
        self.commandName = commandName
        self.version = version
        self.abstract = abstract
        self.discussion = discussion
        self.subcommands = subcommands
    }

    /// The subcommand called `name`, if there is one.
    public func subcommand(named name: String) -> (any ParsableCommand.Type)? {
        subcommands.first { $0.configuration.commandName == name }
    }
}
