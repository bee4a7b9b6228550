/// Splits command-line words into options, option values and positional arguments.
///
/// Accepted spellings: `--name value`, `--name=value`, `-v`, `-vv` (clustered one-letter flags), and `--` to end
/// the options. A value that starts with `-` must be written `--name=-value`, except a negative number
/// (`--timeout -1` reaches validation, which explains the range). The scanner goes on after a mistake so that
/// `--help` anywhere still shows help; otherwise the first mistake is the error.
struct ArgumentScanner {
    /// What scanning found.
    struct Result {
        var values = ParsedValues()
        /// The first mistake, if any, in command-line order.
        var error: CLIError?
        /// In root mode: the index of the subcommand word, if one was found.
        var subcommandIndex: Int?
        /// In root mode: whether `--` came before the subcommand word.
        var optionsEnded = false
    }

    let options: [OptionDefinition]

    init(options: [OptionDefinition]) {
        self.options = options
    }

    private func option(named name: String) -> OptionDefinition? {
        options.first { $0.name == name }
    }

    private func option(short: Character) -> OptionDefinition? {
        options.first { $0.short == short }
    }

    /// Scans `words`. With `stopAtPositional`, stops at the first positional word (the subcommand) and reports its
    /// index instead of collecting it.
    func scan(_ words: [String], stopAtPositional: Bool = false) -> Result {
        var result = Result()
        var optionsEnded = false
        var index = 0
        func fail(_ message: String) {
            if result.error == nil {
                result.error = .usage(message)
            }
        }
        while index < words.count {
            let word = words[index]
            index += 1
            if optionsEnded || word == "-" || !word.hasPrefix("-") {
                if stopAtPositional {
                    result.subcommandIndex = index - 1
                    result.optionsEnded = optionsEnded
                    return result
                }
                result.values.arguments.append(word)
            } else if word == "--" {
                optionsEnded = true
            } else if word.hasPrefix("--") {
                let body = word.dropFirst(2)
                let name = String(body.prefix(while: { $0 != "=" }))
                let inlineValue = body.firstIndex(of: "=").map { String(body[body.index(after: $0)...]) }
                guard let definition = option(named: name) else {
                    fail(unknownOptionMessage("--" + name))
                    continue
                }
                if !definition.takesValue {
                    if inlineValue != nil {
                        fail("Option '\(definition.longSpelling)' does not take a value")
                    } else {
                        result.values.record(definition.name)
                    }
                } else if let inlineValue {
                    result.values.record(definition.name, value: inlineValue)
                } else if index < words.count, Self.canBeValue(words[index]) {
                    result.values.record(definition.name, value: words[index])
                    index += 1
                } else {
                    fail("Missing value for '\(definition.synopsis)'")
                }
            } else {
                // One or more one-letter options: -v, -vv, -hv.
                var letters = word.dropFirst()[...]
                while let letter = letters.popFirst() {
                    guard let definition = option(short: letter) else {
                        fail("Unknown option '-\(TerminalText.escape(String(letter)))'")
                        continue
                    }
                    if !definition.takesValue {
                        result.values.record(definition.name)
                    } else if !letters.isEmpty {
                        result.values.record(definition.name, value: String(letters))
                        letters = ""
                    } else if index < words.count, Self.canBeValue(words[index]) {
                        result.values.record(definition.name, value: words[index])
                        index += 1
                    } else {
                        fail("Missing value for '-\(letter) <\(definition.valueName)>'")
                    }
                }
            }
        }
        return result
    }

    /// Whether the word after an option may be its value: anything but another option (negative numbers may).
    static func canBeValue(_ word: String) -> Bool {
        guard word.hasPrefix("-"), word != "-" else {
            return true
        }
        let next = word.dropFirst().first
        return next == "." || (next?.isASCII == true && next?.isNumber == true)
    }

    func unknownOptionMessage(_ spelling: String) -> String {
        let shown = "Unknown option '\(TerminalText.excerpt(spelling))'"
        let longNames = options.map(\.longSpelling)
        guard let suggestion = EditDistance.closest(to: spelling, in: longNames) else {
            return shown
        }
        return shown + ". Did you mean '\(suggestion)'?"
    }
}
