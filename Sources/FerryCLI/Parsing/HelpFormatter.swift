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

    /// `ferry peers [--timeout <seconds>] [--json] [<global options>]`, as a list of items to wrap.
    func usageItems(for command: any ParsableCommand.Type) -> [String] {
        let configuration = command.configuration
        var items = ["\(root.commandName) \(configuration.commandName)"]
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

    /// The usage line of an error message for `command` (or the root when `nil`), with its "See ..." hint.
    func errorUsage(for command: (any ParsableCommand.Type)?) -> String {
        guard let command else {
            return "Usage: \(rootUsage)\n  See '\(root.commandName) --help' for more information.\n"
        }
        let usage = TextWrapper.wrap(items: usageItems(for: command), prefix: "Usage: ", indent: 7)
        let name = "\(root.commandName) \(command.configuration.commandName)"
        return "\(usage)\n  See '\(name) --help' for more information.\n"
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

    /// The help of one subcommand: overview, usage, arguments, its options, the global options.
    func help(for command: any ParsableCommand.Type) -> String {
        let configuration = command.configuration
        var sections: [String] = []
        if !configuration.arguments.isEmpty {
            sections.append(section("ARGUMENTS", configuration.arguments.map { ("<\($0.name)>", $0.help) }))
        }
        sections.append(section("OPTIONS", (configuration.options + [OptionDefinition.help]).map(element)))
        sections.append(section("GLOBAL OPTIONS", GlobalOptions.definitions.map(element)))
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
