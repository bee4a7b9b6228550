/// A `ferry` subcommand: parsed from the command line, validated, then run.
///
/// The three steps are separate on purpose, as in swift-argument-parser. `init(parsing:)` only turns strings into
/// typed values (a bad number is a usage error); `validate()` checks what the values mean together (ranges,
/// combinations), with no side effects; `run(context:)` does the work and is the only step that touches the
/// network or the terminal. The two first steps can therefore be tested exhaustively in-process.
public protocol ParsableCommand: Sendable {
    /// Name, abstract, discussion, arguments and options of the command.
    static var configuration: CommandConfiguration { get }

    /// The options every command accepts (session, name, port, peers, interfaces, verbosity).
    var global: GlobalOptions { get set }

    /// Builds the command from scanned values; throws `CLIError.usage` for a value that does not parse.
    init(parsing values: ParsedValues) throws

    /// Checks the parsed values; throws `CLIError.usage` naming the option and the accepted range.
    /// `global.validate()` is called by the parser before this.
    func validate() throws

    /// Does the work. Returns the exit code; throws `CLIError` for a failure to report, or `CancellationError`
    /// when interrupted.
    func run(context: CommandContext) async throws -> ExitCode
}

extension ParsableCommand {
    /// By default every parsed value is accepted.
    public func validate() throws {}
}
