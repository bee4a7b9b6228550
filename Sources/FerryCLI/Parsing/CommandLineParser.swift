/// Turns the words of a command line into what to do: show help, show the version, or run a parsed command.
///
/// The grammar is `ferry [<global options>] <subcommand> [<options and arguments>]`: global options may come
/// before or after the subcommand (values from both places are merged, later ones winning), `ferry help
/// [<subcommand>]` and `-h`/`--help` anywhere show help, `--version` before the subcommand shows the version.
/// Parsing, `GlobalOptions.validate()` and the command's `validate()` all run here; nothing runs the command.
struct CommandLineParser {
    /// What the command line asks for.
    enum Invocation {
        case rootHelp
        case help(any ParsableCommand.Type)
        case version
        case run(any ParsableCommand)
    }

    /// A usage error, with the command whose usage line to show (`nil`: the root's).
    struct Failure: Error {
        var error: CLIError
        var command: (any ParsableCommand.Type)?
    }

    let root: RootCommand

    /// Parses `words` (the arguments without the executable's name).
    func parse(_ words: [String]) throws(Failure) -> Invocation {
        let rootScan = ArgumentScanner(options: GlobalOptions.definitions + [.version, .help])
            .scan(words, stopAtPositional: true)
        guard let subcommandIndex = rootScan.subcommandIndex else {
            if rootScan.values.isSet("help") || words.isEmpty {
                return .rootHelp
            }
            if let error = rootScan.error {
                throw Failure(error: error, command: nil)
            }
            if rootScan.values.isSet("version") {
                return .version
            }
            throw Failure(error: .usage("Missing subcommand; choose one of: \(subcommandList)"), command: nil)
        }
        if let error = rootScan.error, !rootScan.values.isSet("help") {
            throw Failure(error: error, command: nil)
        }
        let name = words[subcommandIndex]
        if name == "help" && !rootScan.optionsEnded {
            return try helpInvocation(topic: words[(subcommandIndex + 1)...].first { !$0.hasPrefix("-") })
        }
        guard let command = root.subcommand(named: name) else {
            throw Failure(error: unknownSubcommand(name), command: nil)
        }
        if rootScan.values.isSet("help") {
            return .help(command)
        }
        if rootScan.values.isSet("version") {
            return .version
        }
        var rest = Array(words[(subcommandIndex + 1)...])
        if rootScan.optionsEnded {
            rest.insert("--", at: 0)
        }
        let scan = ArgumentScanner(options: command.configuration.options + GlobalOptions.definitions + [.help])
            .scan(rest)
        if scan.values.isSet("help") {
            return .help(command)
        }
        do {
            if let error = scan.error {
                throw error
            }
            try Self.checkArity(scan.values.arguments, against: command.configuration.arguments)
            var values = rootScan.values
            values.merge(scan.values)
            let parsed = try command.init(parsing: values)
            try parsed.global.validate()
            try parsed.validate()
            return .run(parsed)
        } catch let error as CLIError {
            throw Failure(error: error, command: command)
        } catch {
            throw Failure(error: .usage(CommandRunner.describe(error)), command: command)
        }
    }

    private var subcommandList: String {
        root.subcommands.map { $0.configuration.commandName }.joined(separator: ", ")
    }

    private func helpInvocation(topic: String?) throws(Failure) -> Invocation {
        guard let topic else {
            return .rootHelp
        }
        guard let command = root.subcommand(named: topic) else {
            throw Failure(error: unknownSubcommand(topic), command: nil)
        }
        return .help(command)
    }

    private func unknownSubcommand(_ name: String) -> CLIError {
        let names = root.subcommands.map { $0.configuration.commandName }
        var message = "Unknown subcommand '\(TerminalText.escape(name))'"
        if let suggestion = EditDistance.closest(to: name, in: names) {
            message += ". Did you mean '\(suggestion)'?"
        } else {
            message += "; choose one of: \(subcommandList)"
        }
        return .usage(message)
    }

    /// Checks the number of positional arguments: required ones present, no extra ones.
    static func checkArity(_ arguments: [String], against definitions: [ArgumentDefinition]) throws(CLIError) {
        var remaining = arguments.count
        for definition in definitions {
            if remaining > 0 {
                remaining = definition.isRepeating ? 0 : remaining - 1
            } else if !definition.isOptional {
                throw .usage("Missing expected argument '\(definition.synopsis)'")
            }
        }
        if remaining > 0 {
            let extra = arguments[arguments.count - remaining]
            throw .usage("Unexpected argument '\(TerminalText.escape(extra))'")
        }
    }
}
