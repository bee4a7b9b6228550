/// A small JSON parser (RFC 8259) whose every allocation is bounded before it is made, for bodies from peers.
///
/// Why not Foundation's JSONSerialization or JSONDecoder: FerryWire does not link Foundation, and neither
/// bounds what it builds: a 4 MiB body of `{"a":{},...}` would become 500000 dictionary entries before any
/// count could be checked. Here the input's length is checked first (`maxBytes`, before a byte is read), then
/// while parsing: nesting depth, entries per object or array (the 10001st file of a prepare-upload throws,
/// the rest is never built), bytes per string and per number. Strict: no trailing commas, comments, BOM, lone
/// surrogates, invalid UTF-8, control characters in strings, duplicate keys or bytes after the value.
struct BoundedJSONParser {
    struct Bounds: Sendable {
        var maxBytes: Int
        var maxDepth = 8
        var maxEntries: Int
        var maxStringBytes: Int
        var maxNumberLength = 32
        /// Values in the whole document: the per-container bound alone lets many small containers build millions.
        var maxValues: Int
    }

    let bounds: Bounds
    let bytes: [UInt8]
    var index = 0
    var values = 0

    /// Parses `body` whole; throws `bodyTooLarge` above `maxBytes` without reading it.
    static func parse(_ body: ArraySlice<UInt8>, bounds: Bounds) throws(HTTPError) -> JSONValue {
        guard body.count <= bounds.maxBytes else { throw .bodyTooLarge(length: body.count, limit: bounds.maxBytes) }
        var parser = BoundedJSONParser(bounds: bounds, bytes: Array(body))
        parser.skipWhitespace()
        let value = try parser.value(depth: 1, path: "$")
        parser.skipWhitespace()
        guard parser.index == parser.bytes.count else { throw parser.error("bytes after the value") }
        return value
    }

    private init(bounds: Bounds, bytes: [UInt8]) {
        self.bounds = bounds
        self.bytes = bytes
    }

    func error(_ what: String) -> HTTPError {
        .invalidJSON("at byte \(index): \(what)")
    }

    private mutating func skipWhitespace() {
        while index < bytes.count, [0x20, 0x09, 0x0A, 0x0D].contains(bytes[index]) { index += 1 }
    }

    private mutating func value(depth: Int, path: String) throws(HTTPError) -> JSONValue {
        guard index < bytes.count else { throw error("unexpected end") }
        values += 1
        guard values <= bounds.maxValues else {
            throw .tooManyEntries("$ (values in the document)", limit: bounds.maxValues)
        }
        switch bytes[index] {
        case UInt8(ascii: "{"): return try object(depth: depth, path: path)
        case UInt8(ascii: "["): return try array(depth: depth, path: path)
        case UInt8(ascii: "\""): return .string(try string())
        case UInt8(ascii: "t"): try literal("true"); return .bool(true)
        case UInt8(ascii: "f"): try literal("false"); return .bool(false)
        case UInt8(ascii: "n"): try literal("null"); return .null
        default: return .number(try number())
        }
    }

    private mutating func literal(_ word: String) throws(HTTPError) {
        let utf8 = Array(word.utf8)
        guard bytes.count - index >= utf8.count, bytes[index..<(index + utf8.count)].elementsEqual(utf8) else {
            throw error("not a JSON value")
        }
        index += utf8.count
    }

    private mutating func object(depth: Int, path: String) throws(HTTPError) -> JSONValue {
        guard depth <= bounds.maxDepth else { throw error("nested deeper than \(bounds.maxDepth)") }
        index += 1
        var object = JSONObject()
        var keys = Set<String>()
        skipWhitespace()
        if index < bytes.count, bytes[index] == UInt8(ascii: "}") {
            index += 1
            return .object(object)
        }
        while true {
            guard object.members.count < bounds.maxEntries else {
                throw .tooManyEntries(path, limit: bounds.maxEntries)
            }
            guard index < bytes.count, bytes[index] == UInt8(ascii: "\"") else { throw error("expected a key") }
            let key = try string()
            guard keys.insert(key).inserted else { throw error("duplicate key in \(path)") }
            skipWhitespace()
            guard index < bytes.count, bytes[index] == UInt8(ascii: ":") else { throw error("expected ':'") }
            index += 1
            skipWhitespace()
            object.members.append((key, try value(depth: depth + 1, path: path + "." + key.prefix(64))))
            skipWhitespace()
            guard index < bytes.count else { throw error("unexpected end") }
            index += 1
            switch bytes[index - 1] {
            case UInt8(ascii: ","): skipWhitespace()
            case UInt8(ascii: "}"): return .object(object)
            default: throw error("expected ',' or '}'")
            }
        }
    }

    private mutating func array(depth: Int, path: String) throws(HTTPError) -> JSONValue {
        guard depth <= bounds.maxDepth else { throw error("nested deeper than \(bounds.maxDepth)") }
        index += 1
        var elements: [JSONValue] = []
        skipWhitespace()
        if index < bytes.count, bytes[index] == UInt8(ascii: "]") {
            index += 1
            return .array(elements)
        }
        while true {
            guard elements.count < bounds.maxEntries else { throw .tooManyEntries(path, limit: bounds.maxEntries) }
            elements.append(try value(depth: depth + 1, path: path + "[]"))
            skipWhitespace()
            guard index < bytes.count else { throw error("unexpected end") }
            index += 1
            switch bytes[index - 1] {
            case UInt8(ascii: ","): skipWhitespace()
            case UInt8(ascii: "]"): return .array(elements)
            default: throw error("expected ',' or ']'")
            }
        }
    }

    private mutating func number() throws(HTTPError) -> String {
        let start = index
        let digits = UInt8(ascii: "0")...UInt8(ascii: "9")
        func skipDigits(_ parser: inout BoundedJSONParser) -> Int {
            let first = parser.index
            while parser.index < parser.bytes.count, digits.contains(parser.bytes[parser.index]) { parser.index += 1 }
            return parser.index - first
        }
        if index < bytes.count, bytes[index] == UInt8(ascii: "-") { index += 1 }
        let integerStart = index
        guard skipDigits(&self) > 0 else { throw error("not a JSON value") }
        guard bytes[integerStart] != UInt8(ascii: "0") || index - integerStart == 1 else {
            throw error("number with a leading zero")
        }
        if index < bytes.count, bytes[index] == UInt8(ascii: ".") {
            index += 1
            guard skipDigits(&self) > 0 else { throw error("number: no digits after '.'") }
        }
        if index < bytes.count, bytes[index] == UInt8(ascii: "e") || bytes[index] == UInt8(ascii: "E") {
            index += 1
            if index < bytes.count, bytes[index] == UInt8(ascii: "+") || bytes[index] == UInt8(ascii: "-") {
                index += 1
            }
            guard skipDigits(&self) > 0 else { throw error("number: no exponent digits") }
        }
        guard index - start <= bounds.maxNumberLength else { throw error("number longer than its bound") }
        return String(decoding: bytes[start..<index], as: UTF8.self)
    }
}
