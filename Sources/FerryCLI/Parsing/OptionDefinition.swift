/// The declaration of one named option: how it is spelled, whether it takes a value, how help describes it.
///
/// A command lists its options once, in its static `CommandConfiguration`; the scanner, the usage line, the help
/// text and the "did you mean" suggestions are all derived from that list, so they cannot disagree.
public struct OptionDefinition: Sendable, Hashable {
    /// What an option does with the command line.
    public enum Kind: Sendable, Hashable {
        /// `--json`: present or not.
        case flag
        /// `-v -v`: how many times it was given.
        case counter
        /// `--timeout <seconds>`: takes one value; given twice, the last one wins.
        case value
        /// `--peer <host:port>`: takes one value each time; every value is kept, in order.
        case repeatingValue
    }

    /// The long name without dashes: `timeout` for `--timeout`.
    public var name: String
    /// The one-letter name without the dash: `v` for `-v`.
    public var short: Character?
    /// Whether it is a flag, a counter, or takes one value or repeated values.
    public var kind: Kind
    /// The placeholder in usage and help: `seconds` renders as `<seconds>`. Unused for flags and counters.
    public var valueName: String
    /// One or two sentences for the help text.
    public var help: String
    /// The default as help shows it, `(default: 3)`; `nil` shows none.
    public var defaultDescription: String?
    /// The accepted values as help shows them, `(values: server, client, peer; ...)`; empty shows none.
    public var allowedValues: [String]

    /// An option with every field given; the static helpers (`option`, `flag`, ...) are shorter for the usual kinds.
    public init(
        name: String,
        short: Character? = nil,
        kind: Kind,
        valueName: String = "value",
        help: String,
        defaultDescription: String? = nil,
        allowedValues: [String] = []
    ) {
        self.name = name
        self.short = short
        self.kind = kind
        self.valueName = valueName
        self.help = help
        self.defaultDescription = defaultDescription
        self.allowedValues = allowedValues
    }

    /// An option that takes one value: `--name <valueName>`.
    public static func option(
        _ name: String,
        valueName: String,
        help: String,
        default defaultDescription: String? = nil,
        values allowedValues: [String] = []
    ) -> OptionDefinition {
        OptionDefinition(
            name: name,
            kind: .value,
            valueName: valueName,
            help: help,
            defaultDescription: defaultDescription,
            allowedValues: allowedValues
        )
    }

    /// An option that may be given many times, each with one value.
    public static func repeating(
        _ name: String,
        valueName: String,
        help: String,
        default defaultDescription: String? = nil
    ) -> OptionDefinition {
        OptionDefinition(
            name: name,
            kind: .repeatingValue,
            valueName: valueName,
            help: help,
            defaultDescription: defaultDescription
        )
    }

    /// A flag that is either given or not.
    public static func flag(_ name: String, short: Character? = nil, help: String) -> OptionDefinition {
        OptionDefinition(name: name, short: short, kind: .flag, help: help)
    }

    /// A flag that counts how often it was given.
    public static func counter(_ name: String, short: Character? = nil, help: String) -> OptionDefinition {
        OptionDefinition(name: name, short: short, kind: .counter, help: help)
    }

    /// Whether the option consumes a value from the command line.
    public var takesValue: Bool {
        kind == .value || kind == .repeatingValue
    }

    /// `--timeout`.
    public var longSpelling: String {
        "--" + name
    }

    /// How usage and error messages show the option: `--timeout <seconds>` or `--json`.
    public var synopsis: String {
        takesValue ? "\(longSpelling) <\(valueName)>" : longSpelling
    }

    /// How the help text labels the option: `-v, --verbose` or `--timeout <seconds>`.
    public var helpLabel: String {
        if let short {
            return "-\(short), \(synopsis)"
        }
        return synopsis
    }

    /// The built-in `-h, --help` flag every command accepts.
    public static let help = OptionDefinition.flag("help", short: "h", help: "Show help information.")

    /// The built-in `--version` flag of the root command.
    public static let version = OptionDefinition.flag("version", help: "Show the version.")
}
