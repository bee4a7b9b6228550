extension BoundedJSONParser {
    /// A string at `index` (its opening quote), unescaped; at most `maxStringBytes` UTF-8 bytes once decoded.
    mutating func string() throws(HTTPError) -> String {
        index += 1
        var decoded: [UInt8] = []
        while true {
            guard index < bytes.count else { throw error("unterminated string") }
            let byte = bytes[index]
            index += 1
            switch byte {
            case UInt8(ascii: "\""):
                guard let text = String(validating: decoded, as: UTF8.self) else {
                    throw error("string is not UTF-8")
                }
                return text
            case UInt8(ascii: "\\"):
                try escape(into: &decoded)
            case 0..<0x20:
                throw error("control character in a string")
            default:
                decoded.append(byte)
            }
            guard decoded.count <= bounds.maxStringBytes else {
                throw .bodyTooLarge(length: decoded.count, limit: bounds.maxStringBytes)
            }
        }
    }

    /// The escape after a backslash, appended as UTF-8 (a `\u` surrogate pair as one scalar).
    private mutating func escape(into decoded: inout [UInt8]) throws(HTTPError) {
        guard index < bytes.count else { throw error("unterminated escape") }
        let byte = bytes[index]
        index += 1
        let simple: [UInt8: UInt8] = [
            UInt8(ascii: "\""): UInt8(ascii: "\""), UInt8(ascii: "\\"): UInt8(ascii: "\\"),
            UInt8(ascii: "/"): UInt8(ascii: "/"), UInt8(ascii: "b"): 0x08, UInt8(ascii: "f"): 0x0C,
            UInt8(ascii: "n"): 0x0A, UInt8(ascii: "r"): 0x0D, UInt8(ascii: "t"): 0x09,
        ]
        if let character = simple[byte] {
            decoded.append(character)
            return
        }
        guard byte == UInt8(ascii: "u") else { throw error("invalid escape") }
        var scalar = UInt32(try hex4())
        if (0xD800...0xDBFF).contains(scalar) {
            guard bytes.count - index >= 2, bytes[index] == UInt8(ascii: "\\"), bytes[index + 1] == UInt8(ascii: "u")
            else { throw error("lone surrogate") }
            index += 2
            let low = UInt32(try hex4())
            guard (0xDC00...0xDFFF).contains(low) else { throw error("lone surrogate") }
            scalar = 0x10000 + ((scalar - 0xD800) << 10) + (low - 0xDC00)
        } else if (0xDC00...0xDFFF).contains(scalar) {
            throw error("lone surrogate")
        }
        guard let unicode = Unicode.Scalar(scalar) else { throw error("invalid scalar") }
        decoded += Array(String(Character(unicode)).utf8)
    }

    private mutating func hex4() throws(HTTPError) -> UInt16 {
        guard bytes.count - index >= 4 else { throw error("short \\u escape") }
        var value: UInt16 = 0
        for _ in 0..<4 {
            guard let digit = HTTPRequestDecoder.hexValue(bytes[index]) else { throw error("invalid \\u escape") }
            value = value << 4 | UInt16(digit)
            index += 1
        }
        return value
    }
}
