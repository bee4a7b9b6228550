/// Turns the words of a command line into what to do: show help, show the version, or run a parsed command.
///
/// The grammar is `ferry [<global options>] <subcommand> [<options and arguments>]`, where a group's subcommand
/// names another word (`ferry trust add ID`): global options may come before or after any subcommand word (values
/// from every place are merged, later ones winning), `ferry help [<subcommand>...]` and `-h`/`--help` anywhere show
/// help, `--version` before the subcommand shows the version.
/// Parsing, the environment's defaults for global options (`FERRY_SESSION`, ...), `GlobalOptions.validate()` and the command's `validate()` all run here; nothing runs the command.
struct CommandLineParser {
    /// What the command line asks for.
    enum Invocation {
        case rootHelp
        case help(any ParsableCommand.Type)
        case version
        /// `ferry help --man`: the manual page.
        case manPage
        case run(any ParsableCommand)
    }

    /// A usage error, with the command whose usage line to show (`nil`: the root's).
    struct Failure: Error {
        var error: CLIError
        var command: (any ParsableCommand.Type)?
    }

    let root: RootCommand
    /// The environment, for the defaults of global options (`GlobalOptions.applyEnvironment`).
    var environment: [String: String] = [:]

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
            throw Failure(
                error: .usage("Missing subcommand; choose one of: \(list(root.subcommands))"), command: nil)
        }
        if let error = rootScan.error, !rootScan.values.isSet("help") {
            throw Failure(error: error, command: nil)
        }
        let name = words[subcommandIndex]
        if name == "help" && !rootScan.optionsEnded {
            if words[(subcommandIndex + 1)...].contains(ManPageFormatter.manOption.longSpelling) {
                return .manPage
            }
            return try helpInvocation(topics: words[(subcommandIndex + 1)...].filter { !$0.hasPrefix("-") })
        }
        guard var command = root.subcommand(named: name) else {
            throw Failure(error: unknownSubcommand(name, among: root.subcommands), command: nil)
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
        var values = rootScan.values
        // Groups (`ferry trust`): their options come before the next subcommand word, as the root's do.
        while !command.configuration.subcommands.isEmpty {
            let group = command
            let groupScan = ArgumentScanner(options: group.configuration.options + GlobalOptions.definitions + [.help])
                .scan(rest, stopAtPositional: true)
            guard let index = groupScan.subcommandIndex else {
                if groupScan.values.isSet("help") {
                    return .help(group)
                }
                let choices = list(group.configuration.subcommands)
                let error = groupScan.error ?? .usage("Missing subcommand; choose one of: \(choices)")
                throw Failure(error: error, command: group)
            }
            if let error = groupScan.error, !groupScan.values.isSet("help") {
                throw Failure(error: error, command: group)
            }
            guard let subcommand = group.configuration.subcommand(named: rest[index]) else {
                throw Failure(
                    error: unknownSubcommand(rest[index], among: group.configuration.subcommands), command: group)
            }
            if groupScan.values.isSet("help") {
                return .help(subcommand)
            }
            values.merge(groupScan.values)
            rest = Array(rest[(index + 1)...])
            if groupScan.optionsEnded {
                rest.insert("--", at: 0)
            }
            command = subcommand
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
            values.merge(scan.values)
            var parsed = try command.init(parsing: values)
            try parsed.global.applyEnvironment(environment, given: values)
            try parsed.global.validate()
            try parsed.validate()
            return .run(parsed)
        } catch let error as CLIError {
            throw Failure(error: error, command: command)
        } catch {
            throw Failure(error: .usage(CommandRunner.describe(error)), command: command)
        }
    }

    private func list(_ commands: [any ParsableCommand.Type]) -> String {
        commands.map { $0.configuration.commandName }.joined(separator: ", ")
    }

    /// `ferry help [<subcommand> [<subcommand>]]`: the first words that are not options name the command.
    private func helpInvocation(topics: [String]) throws(Failure) -> Invocation {
        guard let first = topics.first else {
            return .rootHelp
        }
        guard var command = root.subcommand(named: first) else {
            throw Failure(error: unknownSubcommand(first, among: root.subcommands), command: nil)
        }
        for topic in topics.dropFirst() {
            guard !command.configuration.subcommands.isEmpty else {
                break
            }
            guard let subcommand = command.configuration.subcommand(named: topic) else {
                throw Failure(
                    error: unknownSubcommand(topic, among: command.configuration.subcommands), command: command)
            }
            command = subcommand
        }
        return .help(command)
    }

    private func unknownSubcommand(_ name: String, among commands: [any ParsableCommand.Type]) -> CLIError {
        let names = commands.map { $0.configuration.commandName }
        var message = "Unknown subcommand '\(TerminalText.excerpt(name))'"
        if let suggestion = EditDistance.closest(to: name, in: names) {
            message += ". Did you mean '\(suggestion)'?"
        } else {
            message += "; choose one of: \(list(commands))"
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
            throw .usage("Unexpected argument '\(TerminalText.excerpt(extra))'")
        }
    }
}
