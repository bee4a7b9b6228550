/// The declaration of a positional argument, such as the files of `ferry send FILE...`.
///
/// Positional arguments are matched in declaration order; only the last one may repeat. Help lists them under
/// `ARGUMENTS:` and the usage line shows them as `<file> ...` (repeating) or `[<dir>]` (optional).
public struct ArgumentDefinition: Sendable, Hashable {
    /// The placeholder: `file` renders as `<file>`.
    public var name: String
    /// One sentence for the `ARGUMENTS:` section of help.
    public var help: String
    /// Whether the argument may be left out.
    public var isOptional: Bool
    /// Whether it takes every remaining positional value (at least one unless `isOptional`).
    public var isRepeating: Bool
    /// The values it can take, when they are a fixed set (`bash`, `zsh`, `fish`): completion offers them.
    public var allowedValues: [String]

    /// An argument named `name` (the placeholder); required and single unless told otherwise.
    public init(
        _ name: String, help: String, isOptional: Bool = false, isRepeating: Bool = false, allowedValues: [String] = []
    ) {
        self.name = name
        self.help = help
        self.isOptional = isOptional
        self.isRepeating = isRepeating
        self.allowedValues = allowedValues
    }

    /// How usage shows it: `<file> ...`, `[<dir>]`.
    public var synopsis: String {
        let base = "<\(name)>" + (isRepeating ? " ..." : "")
        return isOptional ? "[\(base)]" : base
    }
}
