/// Renders help and usage text in the shape swift-argument-parser users know.
///
/// ```
/// OVERVIEW: <abstract>
///
/// <discussion>
///
/// USAGE: ferry peers [--timeout <seconds>] [--json] [<global options>]
///
/// OPTIONS:
///   --timeout <seconds>     Help text wrapped at 80 columns, continuing under
///                           itself. (default: 3)
/// ```
/// Labels are indented by 2 and help starts at column 26, or on the next line when the label is too long.
struct HelpFormatter {
    static let labelIndent = 2
    static let labelColumnWidth = 26

    let root: RootCommand

    /// `ferry <subcommand>`.
    var rootUsage: String {
        "\(root.commandName) <subcommand>"
    }

    /// `ferry peers [--timeout <seconds>] [--json] [<global options>]`, as a list of items to wrap; a group's is
    /// `ferry trust <subcommand>`.
    func usageItems(for command: any ParsableCommand.Type) -> [String] {
        let configuration = command.configuration
        var items = [commandLine(for: command)]
        if !configuration.subcommands.isEmpty {
            return items + ["<subcommand>"]
        }
        for option in configuration.options {
            switch option.kind {
            case .flag, .value:
                items.append("[\(option.synopsis)]")
            case .counter, .repeatingValue:
                items.append("[\(option.synopsis) ...]")
            }
        }
        items += configuration.arguments.map(\.synopsis)
        items.append("[<global options>]")
        return items
    }

    /// The words that run `command`: `ferry peers`, `ferry trust add`.
    func commandLine(for command: any ParsableCommand.Type) -> String {
        ([root.commandName] + subcommandPath(for: command)).joined(separator: " ")
    }

    /// The subcommand words of `command`: `["trust", "add"]`.
    func subcommandPath(for command: any ParsableCommand.Type) -> [String] {
        Self.path(to: command, in: root.subcommands) ?? [command.configuration.commandName]
    }

    /// The subcommand names from `commands` down to `command`, or `nil` when it is not among them.
    static func path(to command: any ParsableCommand.Type, in commands: [any ParsableCommand.Type]) -> [String]? {
        for candidate in commands {
            let name = candidate.configuration.commandName
            if ObjectIdentifier(candidate) == ObjectIdentifier(command) {
                return [name]
            }
            if let below = path(to: command, in: candidate.configuration.subcommands) {
                return [name] + below
            }
        }
        return nil
    }

    /// The usage line of an error message for `command` (or the root when `nil`), with its "See ..." hint.
    func errorUsage(for command: (any ParsableCommand.Type)?) -> String {
        guard let command else {
            return "Usage: \(rootUsage)\n  See '\(root.commandName) --help' for more information.\n"
        }
        let usage = TextWrapper.wrap(items: usageItems(for: command), prefix: "Usage: ", indent: 7)
        return "\(usage)\n  See '\(commandLine(for: command)) --help' for more information.\n"
    }

    /// The help of the root command: overview, usage, options, subcommands.
    func rootHelp() -> String {
        var sections = [
            section("OPTIONS", [OptionDefinition.version, OptionDefinition.help].map(element)),
            section("SUBCOMMANDS", root.subcommands.map { ($0.configuration.commandName, $0.configuration.abstract) }),
        ]
        sections.append("  See '\(root.commandName) help <subcommand>' for detailed help.\n")
        return overview(abstract: root.abstract, discussion: root.discussion)
            + "USAGE: \(rootUsage)\n\n"
            + sections.joined(separator: "\n")
    }

    /// The help of one subcommand: overview, usage, arguments, its options, the global options it does not
    /// redefine; for a group, its subcommands instead of arguments and global options.
    func help(for command: any ParsableCommand.Type) -> String {
        let configuration = command.configuration
        var sections: [String] = []
        if !configuration.arguments.isEmpty {
            sections.append(section("ARGUMENTS", configuration.arguments.map { ("<\($0.name)>", $0.help) }))
        }
        sections.append(section("OPTIONS", (configuration.options + [OptionDefinition.help]).map(element)))
        if configuration.subcommands.isEmpty {
            let globals = GlobalOptions.definitions.filter { global in
                !configuration.options.contains { $0.name == global.name }
            }
            sections.append(section("GLOBAL OPTIONS", globals.map(element)))
        } else {
            let subcommands = configuration.subcommands.map { $0.configuration }
            sections.append(section("SUBCOMMANDS", subcommands.map { ($0.commandName, $0.abstract) }))
            let path = subcommandPath(for: command).joined(separator: " ")
            sections.append("  See '\(root.commandName) help \(path) <subcommand>' for detailed help.\n")
        }
        return overview(abstract: configuration.abstract, discussion: configuration.discussion)
            + TextWrapper.wrap(items: usageItems(for: command), prefix: "USAGE: ", indent: 7) + "\n\n"
            + sections.joined(separator: "\n")
    }

    private func overview(abstract: String, discussion: String) -> String {
        var text = TextWrapper.wrap(abstract, prefix: "OVERVIEW: ") + "\n\n"
        if !discussion.isEmpty {
            text += TextWrapper.wrap(discussion) + "\n\n"
        }
        return text
    }

    /// `(label, help)` of an option: help followed by its values and default in parentheses.
    private func element(_ option: OptionDefinition) -> (String, String) {
        var notes: [String] = []
        if !option.allowedValues.isEmpty {
            notes.append("values: " + option.allowedValues.joined(separator: ", "))
        }
        if let defaultDescription = option.defaultDescription {
            notes.append("default: " + defaultDescription)
        }
        let help = notes.isEmpty ? option.help : "\(option.help) (\(notes.joined(separator: "; ")))"
        return (option.helpLabel, help)
    }

    /// A titled list of labelled entries; help starts at column 26 or on the next line for long labels.
    private func section(_ title: String, _ elements: [(String, String)]) -> String {
        var text = "\(title):\n"
        let column = String(repeating: " ", count: Self.labelColumnWidth)
        for (label, help) in elements {
            let padded = String(repeating: " ", count: Self.labelIndent) + label
            if padded.count < Self.labelColumnWidth {
                let prefix = padded + String(repeating: " ", count: Self.labelColumnWidth - padded.count)
                text += TextWrapper.wrap(help, prefix: prefix, indent: Self.labelColumnWidth) + "\n"
            } else {
                text += padded + "\n" + TextWrapper.wrap(help, prefix: column, indent: Self.labelColumnWidth) + "\n"
            }
        }
        return text
    }
}
