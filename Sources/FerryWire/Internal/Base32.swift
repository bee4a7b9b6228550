/// RFC 4648 base32 (alphabet A-Z 2-7), without padding.
///
/// Used for the human-readable form of a `DeviceID`: it avoids 0/1/8/9, which users confuse with letters.
enum Base32 {
    private static let alphabet: [UInt8] = Array("ABCDEFGHIJKLMNOPQRSTUVWXYZ234567".utf8)

    /// Uppercase base32 of `bytes`, no padding.
    static func encode(_ bytes: [UInt8]) -> String {
        var result: [UInt8] = []
        result.reserveCapacity((bytes.count * 8 + 4) / 5)
        var buffer: UInt32 = 0
        var bitCount = 0
        for byte in bytes {
            buffer = (buffer << 8) | UInt32(byte)
            bitCount += 8
            while bitCount >= 5 {
                bitCount -= 5
                result.append(alphabet[Int((buffer >> UInt32(bitCount)) & 0x1F)])
            }
        }
        if bitCount > 0 {
            result.append(alphabet[Int((buffer << UInt32(5 - bitCount)) & 0x1F)])
        }
        return String(decoding: result, as: UTF8.self)
    }

    /// Value of one base32 character (either case), or nil.
    static func value(of character: UInt8) -> UInt8? {
        switch character {
        case UInt8(ascii: "A")...UInt8(ascii: "Z"): character - UInt8(ascii: "A")
        case UInt8(ascii: "a")...UInt8(ascii: "z"): character - UInt8(ascii: "a")
        case UInt8(ascii: "2")...UInt8(ascii: "7"): character - UInt8(ascii: "2") + 26
        default: nil
        }
    }

    /// Decodes unpadded base32 into exactly `byteCount` bytes; nil on a bad character, a wrong length, or
    /// non-zero padding bits (so every byte string has exactly one accepted spelling).
    static func decode(_ text: some Collection<UInt8>, byteCount: Int) -> [UInt8]? {
        guard text.count == (byteCount * 8 + 4) / 5 else { return nil }
        var result: [UInt8] = []
        result.reserveCapacity(byteCount)
        var buffer: UInt32 = 0
        var bitCount = 0
        for character in text {
            guard let value = value(of: character) else { return nil }
            buffer = (buffer << 5) | UInt32(value)
            bitCount += 5
            if bitCount >= 8 {
                bitCount -= 8
                result.append(UInt8(truncatingIfNeeded: buffer >> UInt32(bitCount)))
            }
            buffer &= (1 << UInt32(bitCount)) - 1
        }
        guard buffer == 0, result.count == byteCount else { return nil }
        return result
    }
}
