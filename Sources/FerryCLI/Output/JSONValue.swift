/// One JSON value, with objects that keep their keys in the order they were given.
///
/// `--json` output is read by scripts and by people; a stable, meaningful key order (`"event"` first, then the
/// peer, then the details) makes it easy to scan and to diff, which `JSONSerialization` and `JSONEncoder` do not
/// guarantee. The literal conformances let callers write `["event": "found", "port": 41971, "name": .null]`.
public enum JSONValue: Sendable, Equatable {
    case string(String)
    case int(Int)
    case double(Double)
    case bool(Bool)
    case null
    case array([JSONValue])
    /// Key/value pairs in output order; keys should be unique.
    case object([(key: String, value: JSONValue)])

    /// Structural equality; objects are equal only with the same keys in the same order.
    public static func == (lhs: JSONValue, rhs: JSONValue) -> Bool {
        switch (lhs, rhs) {
        case (.string(let a), .string(let b)):
            a == b
        case (.int(let a), .int(let b)):
            a == b
        case (.double(let a), .double(let b)):
            a == b
        case (.bool(let a), .bool(let b)):
            a == b
        case (.null, .null):
            true
        case (.array(let a), .array(let b)):
            a == b
        case (.object(let a), .object(let b)):
            a.count == b.count && zip(a, b).allSatisfy { $0.key == $1.key && $0.value == $1.value }
        default:
            false
        }
    }

    /// The value as compact JSON text (no spaces, no newline).
    public var jsonText: String {
        // Built as UTF-8 bytes, then made a string once: appending to a `String` piece by piece (a `file` line has
        // about 40 pieces, a transfer's `started` line 9 per file) cost a few hundred instructions a piece.
        var out: [UInt8] = []
        // One allocation for a typical line (a transfer's `file` event is about 400 bytes), not one per doubling.
        out.reserveCapacity(512)
        write(to: &out)
        return String(decoding: out, as: UTF8.self)
    }

    func write(to out: inout [UInt8]) {
        switch self {
        case .string(let s):
            JSONValue.writeString(s, to: &out)
        case .int(let i):
            JSONValue.append(String(i), to: &out)
        case .double(let d):
            // JSON has no NaN or infinity; `description` of a finite Double is valid JSON ("3.0", "1e-05").
            JSONValue.append(d.isFinite ? d.description : "null", to: &out)
        case .bool(let b):
            JSONValue.append(b ? "true" : "false", to: &out)
        case .null:
            JSONValue.append("null", to: &out)
        case .array(let elements):
            out.append(UInt8(ascii: "["))
            for (index, element) in elements.enumerated() {
                if index > 0 {
                    out.append(UInt8(ascii: ","))
                }
                element.write(to: &out)
            }
            out.append(UInt8(ascii: "]"))
        case .object(let pairs):
            out.append(UInt8(ascii: "{"))
            for (index, pair) in pairs.enumerated() {
                if index > 0 {
                    out.append(UInt8(ascii: ","))
                }
                JSONValue.writeString(pair.key, to: &out)
                out.append(UInt8(ascii: ":"))
                pair.value.write(to: &out)
            }
            out.append(UInt8(ascii: "}"))
        }
    }

    /// Appends the UTF-8 bytes of `s`: copied from its storage when it has them together (a native string).
    static func append(_ s: String, to out: inout [UInt8]) {
        if s.utf8.withContiguousStorageIfAvailable({ out.append(contentsOf: $0) }) == nil {
            out.append(contentsOf: s.utf8)
        }
    }

    /// Writes `s` as a JSON string literal (RFC 8259 section 7).
    ///
    /// Beyond what JSON requires (`"`, `\` and U+0000-U+001F), DEL, the C1 controls, the bidi controls and U+2028/
    /// U+2029 are written as `\uXXXX` too: the parsed value is the same, and the line stays safe to show on a
    /// terminal and to paste into JavaScript. Other non-ASCII text is written as UTF-8.
    static func writeString(_ s: String, to out: inout [UInt8]) {
        // Most strings (event names, keys, IDs, digests, ASCII file names) need no escape: appended whole, not
        // scalar by scalar (the JSON lines of 1000 small files were 4-8% of a sender's CPU that way).
        func plain(_ byte: UInt8) -> Bool {
            byte >= 0x20 && byte < 0x7F && byte != UInt8(ascii: "\"") && byte != UInt8(ascii: "\\")
        }
        // Over the string's own UTF-8 bytes where it has them (a native string): a plain loop over a buffer.
        if s.utf8.withContiguousStorageIfAvailable({ $0.allSatisfy(plain) }) ?? s.utf8.allSatisfy(plain) {
            out.append(UInt8(ascii: "\""))
            append(s, to: &out)
            out.append(UInt8(ascii: "\""))
            return
        }
        out.append(UInt8(ascii: "\""))
        for scalar in s.unicodeScalars {
            switch scalar {
            case "\"":
                append("\\\"", to: &out)
            case "\\":
                append("\\\\", to: &out)
            case "\n":
                append("\\n", to: &out)
            case "\r":
                append("\\r", to: &out)
            case "\t":
                append("\\t", to: &out)
            case "\u{08}":
                append("\\b", to: &out)
            case "\u{0C}":
                append("\\f", to: &out)
            default:
                if TerminalText.needsEscape(scalar) || scalar.value == 0x2028 || scalar.value == 0x2029 {
                    let hex = String(scalar.value, radix: 16)
                    append("\\u" + String(repeating: "0", count: max(0, 4 - hex.count)) + hex, to: &out)
                } else {
                    UTF8.encode(scalar) { out.append($0) }
                }
            }
        }
        out.append(UInt8(ascii: "\""))
    }
}

extension JSONValue: ExpressibleByStringLiteral, ExpressibleByIntegerLiteral, ExpressibleByFloatLiteral,
    ExpressibleByBooleanLiteral, ExpressibleByNilLiteral, ExpressibleByArrayLiteral, ExpressibleByDictionaryLiteral
{
    /// A string literal is `.string`.
    public init(stringLiteral value: String) {
        self = .string(value)
    }

    /// An integer literal is `.int`.
    public init(integerLiteral value: Int) {
        self = .int(value)
    }

    /// A floating-point literal is `.double`.
    public init(floatLiteral value: Double) {
        self = .double(value)
    }

    /// `true` and `false` are `.bool`.
    public init(booleanLiteral value: Bool) {
        self = .bool(value)
    }

    /// `nil` is `.null`.
    public init(nilLiteral: ()) {
        self = .null
    }

    /// An array literal is `.array`, its elements in order.
    public init(arrayLiteral elements: JSONValue...) {
        self = .array(elements)
    }

    /// A dictionary literal is `.object`, its keys in the order written.
    public init(dictionaryLiteral elements: (String, JSONValue)...) {
        self = .object(elements.map { (key: $0.0, value: $0.1) })
    }
}
