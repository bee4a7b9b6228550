/// The byte classes of HTTP/1.1's grammar (RFC 9110 5.6, RFC 9112) the decoder and encoder check against.
enum HTTPSyntax {
    static let cr = UInt8(ascii: "\r")
    static let lf = UInt8(ascii: "\n")
    static let space = UInt8(ascii: " ")
    static let tab = UInt8(ascii: "\t")

    /// `tchar`: the characters of a method, a field name or a transfer coding.
    static func isTokenCharacter(_ byte: UInt8) -> Bool {
        switch byte {
        case UInt8(ascii: "a")...UInt8(ascii: "z"), UInt8(ascii: "A")...UInt8(ascii: "Z"),
            UInt8(ascii: "0")...UInt8(ascii: "9"):
            true
        default:
            Array("!#$%&'*+-.^_`|~".utf8).contains(byte)
        }
    }

    static func isToken<S: Sequence<UInt8>>(_ bytes: S) -> Bool {
        var empty = true
        for byte in bytes {
            guard isTokenCharacter(byte) else { return false }
            empty = false
        }
        return !empty
    }

    /// A byte allowed in a field value: visible ASCII, space, tab and obs-text (0x80...0xFF, kept as sent).
    static func isFieldValueCharacter(_ byte: UInt8) -> Bool {
        byte == tab || (byte >= 0x20 && byte != 0x7F)
    }

    static func lower(_ byte: UInt8) -> UInt8 {
        (UInt8(ascii: "A")...UInt8(ascii: "Z")).contains(byte) ? byte | 0x20 : byte
    }

    /// `text` without leading and trailing spaces and tabs (OWS).
    static func trimmed(_ text: Substring) -> String {
        let utf8 = Array(text.utf8)
        var start = 0
        var end = utf8.count
        while start < end, utf8[start] == space || utf8[start] == tab { start += 1 }
        while end > start, utf8[end - 1] == space || utf8[end - 1] == tab { end -= 1 }
        return String(decoding: utf8[start..<end], as: UTF8.self)
    }

    /// Bytes as a string for a field value: UTF-8 where it is, each other byte as its Latin-1 character, so no
    /// byte is lost (obs-text is opaque data; the caller compares only ASCII tokens in it).
    static func string(_ bytes: ArraySlice<UInt8>) -> String {
        if let text = String(validating: bytes, as: UTF8.self) { return text }
        return String(String.UnicodeScalarView(bytes.map { Unicode.Scalar($0) }))
    }
}
