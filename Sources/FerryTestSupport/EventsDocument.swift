import Foundation
import Glibc

/// docs/EVENTS.md read back: the commands (`## \`ferry chat --json\``), their events (`### \`ready\``) and each
/// event's fields (the first column of its table, in backquotes), so that tests can hold the document and the code
/// to each other.
///
/// An event whose text says "Fields as `available`." has the fields of that event of the same command. Headings
/// without a backquoted name ("### The peer object") end the event before them and belong to none.
public struct EventsDocument: Sendable {
    /// Command heading → event name → field names.
    public private(set) var commands: [String: [String: Set<String>]] = [:]
    /// Command heading → event names in the order documented.
    public private(set) var order: [String: [String]] = [:]

    /// The document of the package that contains `file` (pass `#filePath` of a test).
    public static func load(besides file: String) throws -> EventsDocument {
        var url = URL(fileURLWithPath: file)
        for _ in 0..<6 {
            url.deleteLastPathComponent()
            let candidate = url.appendingPathComponent("docs/EVENTS.md")
            if FileManager.default.fileExists(atPath: candidate.path) {
                return EventsDocument(text: try String(contentsOf: candidate, encoding: .utf8))
            }
        }
        throw TestSupportError.systemCall("finding docs/EVENTS.md above \(file)", errno: ENOENT)
    }

    public init(text: String) {
        var command: String?
        var event: String?
        var sameAs: [String: [String: String]] = [:]
        for rawLine in text.split(separator: "\n", omittingEmptySubsequences: false) {
            let line = rawLine.trimmingCharacters(in: .whitespaces)
            if line.hasPrefix("## ") {
                command = Self.firstQuoted(line)
                event = nil
                if let command, commands[command] == nil {
                    commands[command] = [:]
                    order[command] = []
                }
            } else if line.hasPrefix("### ") || line.hasPrefix("#### ") {
                event = nil
                if let command, let name = Self.firstQuoted(line), line.hasPrefix("### `") {
                    event = name
                    commands[command, default: [:]][name] = []
                    order[command, default: []].append(name)
                }
            } else if let command, let event {
                if line.hasPrefix("| `") {
                    if let field = Self.firstQuoted(line) {
                        commands[command]?[event]?.insert(field)
                    }
                } else if let range = line.range(of: "Fields as `"),
                    let other = Self.firstQuoted("`" + line[range.upperBound...])
                {
                    sameAs[command, default: [:]][event] = other
                }
            }
        }
        for (command, events) in sameAs {
            for (event, other) in events {
                let inherited = commands[command]?[other] ?? []
                commands[command]?[event]?.formUnion(inherited)
            }
        }
    }

    /// The text between the first pair of backquotes in `line`.
    static func firstQuoted(_ line: String) -> String? {
        let parts = line.split(separator: "`", omittingEmptySubsequences: false)
        guard parts.count >= 3 else { return nil }
        return String(parts[1])
    }

    /// What in `lines` (one command's `--json` output) the document does not name: unknown events, and keys of
    /// known events missing from their tables. Empty when every line is documented.
    public func undocumented(in lines: [String], command: String) -> [String] {
        var problems: [String] = []
        guard let events = commands[command] else { return ["no section `\(command)` in docs/EVENTS.md"] }
        for line in lines where line.hasPrefix("{") {
            guard let data = line.data(using: .utf8),
                let object = (try? JSONSerialization.jsonObject(with: data)) as? [String: Any]
            else {
                problems.append("not a JSON object: \(line)")
                continue
            }
            guard let event = object["event"] as? String else {
                problems.append("no \"event\" key: \(line)")
                continue
            }
            guard let fields = events[event] else {
                problems.append("event \(event) of \(command) is not documented: \(line)")
                continue
            }
            for key in object.keys where key != "event" && !fields.contains(key) {
                problems.append("key \(key) of event \(event) (\(command)) is not documented: \(line)")
            }
        }
        return problems
    }

    /// The top-level keys of the JSON object on `line`, in the order written (`JSONSerialization` loses it).
    public static func keys(of line: String) -> [String] {
        var keys: [String] = []
        var depth = 0
        var index = line.startIndex
        while index < line.endIndex {
            let character = line[index]
            if character == "{" || character == "[" { depth += 1 }
            if character == "}" || character == "]" { depth -= 1 }
            if character == "\"" {
                var end = line.index(after: index)
                while end < line.endIndex, line[end] != "\"" {
                    if line[end] == "\\" { end = line.index(after: end) }
                    if end < line.endIndex { end = line.index(after: end) }
                }
                let after = end < line.endIndex ? line.index(after: end) : end
                if depth == 1, after < line.endIndex, line[after] == ":" {
                    keys.append(String(line[line.index(after: index)..<end]))
                }
                index = after
                continue
            }
            index = line.index(after: index)
        }
        return keys
    }
}
