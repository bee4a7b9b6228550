/// The raw result of scanning a command line: which options were given, with which strings, and the positional
/// arguments.
///
/// Scanning knows only spellings; this value carries the strings on to `ParsableCommand.init(parsing:)`, which
/// turns them into typed properties with the conversion helpers below. Their errors all read the same way:
/// `--port: 'abc' is not a valid port (0-65535)`.
public struct ParsedValues: Sendable, Equatable {
    private var valuesByName: [String: [String]] = [:]
    private var countsByName: [String: Int] = [:]
    /// The positional arguments, in order.
    public var arguments: [String] = []

    /// No options and no arguments; the scanner records into it.
    public init() {}

    /// Records one occurrence of the option `name` (long name, no dashes), with its value if it takes one.
    public mutating func record(_ name: String, value: String? = nil) {
        countsByName[name, default: 0] += 1
        if let value {
            valuesByName[name, default: []].append(value)
        }
    }

    /// Appends everything in `later` after what is already here (later values win for single-value options).
    public mutating func merge(_ later: ParsedValues) {
        for (name, values) in later.valuesByName {
            valuesByName[name, default: []].append(contentsOf: values)
        }
        for (name, count) in later.countsByName {
            countsByName[name, default: 0] += count
        }
        arguments.append(contentsOf: later.arguments)
    }

    /// How many times the option was given.
    public func count(_ name: String) -> Int {
        countsByName[name] ?? 0
    }

    /// Whether the option was given at least once.
    public func isSet(_ name: String) -> Bool {
        count(name) > 0
    }

    /// Every value given for the option, in command-line order.
    public func all(_ name: String) -> [String] {
        valuesByName[name] ?? []
    }

    /// The value that counts for a single-value option: the last one given.
    public func last(_ name: String) -> String? {
        valuesByName[name]?.last
    }

    /// Converts the last value of `name`, or returns `nil` when the option was not given.
    ///
    /// - Parameter noun: what a valid value is, for the error: `"port (0-65535)"` gives
    ///   `--port: 'abc' is not a valid port (0-65535)`.
    public func parse<T>(_ name: String, as noun: String, _ convert: (String) -> T?) throws -> T? {
        guard let text = last(name) else {
            return nil
        }
        guard let value = convert(text) else {
            throw CLIError.usage(Self.invalidMessage(name: name, text: text, noun: noun))
        }
        return value
    }

    /// Converts every value of a repeatable option, failing on the first that does not convert.
    public func parseAll<T>(_ name: String, as noun: String, _ convert: (String) -> T?) throws -> [T] {
        try all(name).map { text in
            guard let value = convert(text) else {
                throw CLIError.usage(Self.invalidMessage(name: name, text: text, noun: noun))
            }
            return value
        }
    }

    /// Converts the last value of `name` to one of a closed set of choices, listed in the error.
    public func choice<T: RawRepresentable & CaseIterable>(_ name: String, as noun: String) throws -> T?
    where T.RawValue == String {
        let names = T.allCases.map(\.rawValue).joined(separator: ", ")
        return try parse(name, as: "\(noun) (\(names))") { T(rawValue: $0) }
    }

    /// Converts the last value of `name` to a finite number of seconds (validate ranges in `validate()`).
    public func seconds(_ name: String) throws -> Double? {
        try parse(name, as: "number of seconds") { text in
            Double(text).flatMap { $0.isFinite ? $0 : nil }
        }
    }

    /// Converts the last value of `name` to an integer (validate ranges in `validate()`).
    public func integer(_ name: String) throws -> Int? {
        try parse(name, as: "number") { Int($0) }
    }

    static func invalidMessage(name: String, text: String, noun: String) -> String {
        "--\(name): '\(TerminalText.excerpt(text))' is not a valid \(noun)"
    }
}
