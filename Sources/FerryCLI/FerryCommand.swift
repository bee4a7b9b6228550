/// The `ferry` command line: its subcommands and its entry point.
///
/// The executable's `main` only calls `FerryCommand.main(arguments:context:)` and exits with the code it returns;
/// everything else (parsing, help, errors, signals, exit codes) is decided here and below, where in-process tests
/// can reach it.
public enum FerryCommand {
    /// The version `ferry --version` prints.
    public static let version = "0.1.0"

    /// The command tree of `ferry`.
    public static let root = RootCommand(
        commandName: "ferry",
        version: version,
        abstract: "Find peers on the local network and exchange files and messages.",
        discussion: """
            ferry brings the session model of GameKit's GKSession to Linux: peers of a session discover each other \
            by UDP multicast, ask to connect, are accepted or denied, then exchange reliable and unreliable \
            messages.

            Global options (--session, --name, --port, --peer, --interface, -v) may come before or after the \
            subcommand; 'ferry help <subcommand>' lists them. 'ferry help --man' prints the manual page, ferry(1).
            """,
        subcommands: [
            PeersCommand.self, SendCommand.self, ReceiveCommand.self, WatchCommand.self, ChatCommand.self,
            IdCommand.self, TrustCommand.self, HashCommand.self, CompletionsCommand.self,
        ]
    )

    /// Parses `arguments` (as `CommandLine.arguments`: the executable's name first), runs the command, and
    /// returns the code to exit with. All output goes through `context`.
    public static func main(arguments: [String], context: CommandContext) async -> ExitCode {
        await main(arguments: arguments, context: context, root: root)
    }

    /// Like `main(arguments:context:)` with another command tree (tests use their own commands).
    public static func main(arguments: [String], context: CommandContext, root: RootCommand) async -> ExitCode {
        await CommandRunner(root: root, context: context).run(arguments: arguments)
    }
}
