/// Lowercase hexadecimal formatting and parsing without Foundation.
///
/// Used for IDs and frame kinds in descriptions, for parsing IDs typed by users, and (public) for digests: the
/// `digest` of every JSON `file` event and every resume key.
public enum Hex {
    private static let digits: [UInt8] = Array("0123456789abcdef".utf8)

    /// `value` as exactly `width` lowercase hex digits (`width` <= 16).
    static func string(_ value: UInt64, width: Int) -> String {
        var result = [UInt8](repeating: UInt8(ascii: "0"), count: width)
        var rest = value
        for position in stride(from: width - 1, through: 0, by: -1) {
            result[position] = digits[Int(rest & 0xF)]
            rest >>= 4
        }
        return String(decoding: result, as: UTF8.self)
    }

    /// `bytes` as lowercase hex digits, two a byte, written into the string's own storage (a string or a
    /// `Character` per byte was 2-3 % of either end's user time with 1000 small files: each has a digest in its
    /// JSON line and a resume key).
    public static func string(_ bytes: [UInt8]) -> String {
        String(unsafeUninitializedCapacity: bytes.count * 2) { buffer in
            for (index, byte) in bytes.enumerated() {
                buffer[2 * index] = digits[Int(byte >> 4)]
                buffer[2 * index + 1] = digits[Int(byte & 0x0F)]
            }
            return bytes.count * 2
        }
    }

    /// Value of one ASCII hex digit (either case), or nil.
    static func value(of character: UInt8) -> UInt8? {
        switch character {
        case UInt8(ascii: "0")...UInt8(ascii: "9"): character - UInt8(ascii: "0")
        case UInt8(ascii: "a")...UInt8(ascii: "f"): character - UInt8(ascii: "a") + 10
        case UInt8(ascii: "A")...UInt8(ascii: "F"): character - UInt8(ascii: "A") + 10
        default: nil
        }
    }

    /// Parses an even number of hex digits (either case) into bytes, or nil (an odd count, any other byte).
    public static func bytes(_ text: some Collection<UInt8>) -> [UInt8]? {
        guard text.count % 2 == 0 else { return nil }
        var result: [UInt8] = []
        result.reserveCapacity(text.count / 2)
        var high: UInt8?
        for character in text {
            guard let nibble = value(of: character) else { return nil }
            if let first = high {
                result.append(first << 4 | nibble)
                high = nil
            } else {
                high = nibble
            }
        }
        return result
    }
}
