/// `ferry completions SHELL`: prints a completion script for bash, zsh or fish.
///
/// The script is generated from the command definitions (see `CompletionScript`), so it offers exactly the
/// subcommands, options and option values that `--help` lists. An unknown shell is a usage error (exit 64).
public struct CompletionsCommand: ParsableCommand, Equatable {
    /// The name, help text and argument of `ferry completions`.
    public static let configuration = CommandConfiguration(
        commandName: "completions",
        abstract: "Print a shell completion script for bash, zsh or fish.",
        discussion: """
            Install it where your shell looks for completions, e.g.:
              ferry completions bash > ~/.local/share/bash-completion/completions/ferry
              ferry completions zsh > ~/.zfunc/_ferry   (with ~/.zfunc in fpath)
              ferry completions fish > ~/.config/fish/completions/ferry.fish
            """,
        arguments: [
            ArgumentDefinition(
                "shell",
                help: "The shell to complete for: "
                    + CompletionScript.Shell.allCases.map(\.rawValue).joined(separator: ", ") + ".",
                allowedValues: CompletionScript.Shell.allCases.map(\.rawValue))
        ]
    )

    /// The shell as given; `validate()` checks it names one of `CompletionScript.Shell`.
    public var shell: String
    /// The options every command accepts (session, name, port, peers, interfaces, verbosity).
    public var global: GlobalOptions

    /// Creates the command for `shell`, unchecked until `validate()`.
    public init(shell: String, global: GlobalOptions = .init()) {
        self.shell = shell
        self.global = global
    }

    /// Builds the command from scanned values; a missing shell is left empty for `validate()` to reject.
    public init(parsing values: ParsedValues) throws {
        self.init(shell: values.arguments.first ?? "", global: try GlobalOptions(parsing: values))
    }

    /// Throws `CLIError.usage` listing the supported shells when `shell` is not one of them.
    public func validate() throws {
        guard CompletionScript.Shell(rawValue: shell) != nil else {
            let choices = CompletionScript.Shell.allCases.map(\.rawValue).joined(separator: ", ")
            throw CLIError.usage("Unknown shell '\(TerminalText.excerpt(shell))'; choose one of: \(choices)")
        }
    }

    /// Writes the completion script for the shell to standard output; `.usage` for an unknown shell.
    public func run(context: CommandContext) async throws -> ExitCode {
        guard let shell = CompletionScript.Shell(rawValue: shell) else {
            try validate()
            return .usage
        }
        context.stdout.write(CompletionScript(root: FerryCommand.root).script(for: shell))
        return .success
    }
}
