/// A parsed JSON value, as `BoundedJSONParser` builds it and `JSONValue.encoded()` writes it.
///
/// Objects keep their members in order (a duplicate key is refused when parsing), numbers keep their literal
/// text, so a value is read exactly as sent: the typed LocalSend messages decide what a number may be (an Int64
/// size, a 16-bit port) instead of a lossy Double deciding for them.
enum JSONValue: Equatable, Sendable {
    case null
    case bool(Bool)
    /// The number's literal, as RFC 8259 spells it (`-12`, `3.5e2`).
    case number(String)
    case string(String)
    case array([JSONValue])
    case object(JSONObject)

    /// The value as compact JSON (UTF-8, no spaces; `/` and non-ASCII unescaped; control characters as `\u00XX`).
    func encoded() -> [UInt8] {
        var bytes: [UInt8] = []
        write(into: &bytes)
        return bytes
    }

    func write(into bytes: inout [UInt8]) {
        switch self {
        case .null: bytes += "null".utf8
        case .bool(let value): bytes += (value ? "true" : "false").utf8
        case .number(let literal): bytes += literal.utf8
        case .string(let text): Self.writeString(text, into: &bytes)
        case .array(let elements):
            bytes.append(UInt8(ascii: "["))
            for (index, element) in elements.enumerated() {
                if index > 0 { bytes.append(UInt8(ascii: ",")) }
                element.write(into: &bytes)
            }
            bytes.append(UInt8(ascii: "]"))
        case .object(let object):
            bytes.append(UInt8(ascii: "{"))
            for (index, member) in object.members.enumerated() {
                if index > 0 { bytes.append(UInt8(ascii: ",")) }
                Self.writeString(member.key, into: &bytes)
                bytes.append(UInt8(ascii: ":"))
                member.value.write(into: &bytes)
            }
            bytes.append(UInt8(ascii: "}"))
        }
    }

    static func writeString(_ text: String, into bytes: inout [UInt8]) {
        bytes.append(UInt8(ascii: "\""))
        for byte in text.utf8 {
            switch byte {
            case UInt8(ascii: "\""): bytes += #"\""#.utf8
            case UInt8(ascii: "\\"): bytes += #"\\"#.utf8
            case UInt8(ascii: "\n"): bytes += #"\n"#.utf8
            case UInt8(ascii: "\r"): bytes += #"\r"#.utf8
            case UInt8(ascii: "\t"): bytes += #"\t"#.utf8
            case 0..<0x20: bytes += Array(#"\u00"#.utf8) + [hexDigit(byte >> 4), hexDigit(byte & 0xF)]
            default: bytes.append(byte)
            }
        }
        bytes.append(UInt8(ascii: "\""))
    }

    private static func hexDigit(_ value: UInt8) -> UInt8 {
        value < 10 ? UInt8(ascii: "0") + value : UInt8(ascii: "a") + value - 10
    }
}

/// A JSON object's members in the order they came (or are to be written).
struct JSONObject: Equatable, Sendable {
    var members: [(key: String, value: JSONValue)] = []

    init(_ members: [(key: String, value: JSONValue)] = []) {
        self.members = members
    }

    subscript(key: String) -> JSONValue? {
        members.first { $0.key == key }?.value
    }

    /// Adds `key` unless `value` is nil (an optional field the sender omits rather than sending null).
    mutating func add(_ key: String, _ value: JSONValue?) {
        if let value { members.append((key, value)) }
    }

    static func == (lhs: JSONObject, rhs: JSONObject) -> Bool {
        lhs.members.count == rhs.members.count
            && zip(lhs.members, rhs.members).allSatisfy { $0.key == $1.key && $0.value == $1.value }
    }
}
