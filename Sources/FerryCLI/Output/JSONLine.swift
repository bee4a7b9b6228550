/// One line of `--json` output: a JSON object whose keys keep the order they were added in.
///
/// Every `--json` mode of ferry prints one object per line (JSON Lines), so a script can read events as they
/// happen with any line reader; the text never contains a raw newline, whatever a peer puts in its name or
/// message. Build it from literal pairs or append as you go:
///
///     var line = JSONLine(event: JSONEvents.Peers.peer, ["name": .string(name)])
///     line.append("port", .int(port))
///
/// The `event` key is written by `init(event:_:)` only, from the registry in `JSONEvent.swift` (a test fails on
/// any other `"event"` in the sources), so that docs/EVENTS.md can be checked against every event ferry prints.
///     context.stdout.writeLine(line.text)
public struct JSONLine: Sendable, Equatable, ExpressibleByDictionaryLiteral {
    /// The key/value pairs in output order.
    public private(set) var pairs: [(key: String, value: JSONValue)]

    /// An empty object, to `append(_:_:)` to.
    public init() {
        pairs = []
    }

    /// A line with these pairs, in this order; keys should be unique.
    public init(_ pairs: [(key: String, value: JSONValue)]) {
        self.pairs = pairs
    }

    /// A line from literal pairs: `JSONLine(["event": "ready", "port": .int(port)])`.
    public init(_ pairs: KeyValuePairs<String, JSONValue>) {
        self.pairs = pairs.map { (key: $0.key, value: $0.value) }
    }

    /// A line that starts with `"event": event`, then `pairs`.
    public init<Event: JSONEvent>(event: Event, _ pairs: KeyValuePairs<String, JSONValue> = [:]) {
        self.pairs = [(key: "event", value: .string(event.rawValue))] + pairs.map { (key: $0.key, value: $0.value) }
    }

    /// A line from a dictionary literal, its keys in the order written.
    public init(dictionaryLiteral elements: (String, JSONValue)...) {
        pairs = elements.map { (key: $0.0, value: $0.1) }
    }

    /// Adds `key` at the end, or replaces its value in place when it is already present.
    public mutating func append(_ key: String, _ value: JSONValue) {
        if let index = pairs.firstIndex(where: { $0.key == key }) {
            pairs[index].value = value
        } else {
            pairs.append((key: key, value: value))
        }
    }

    /// The object as compact JSON, without the trailing newline.
    public var text: String {
        JSONValue.object(pairs).jsonText
    }

    /// Equal when both have the same keys in the same order with equal values.
    public static func == (lhs: JSONLine, rhs: JSONLine) -> Bool {
        JSONValue.object(lhs.pairs) == JSONValue.object(rhs.pairs)
    }
}
