/// A bounds-checked, big-endian cursor over bytes received from a peer.
///
/// Every message codec reads through this type so that a short or hostile payload can only ever produce
/// `WireError.malformed` / `.invalidField`, never a trap: each read checks the remaining length first, and
/// string lengths are checked against their limit before any bytes are copied.
struct ByteReader {
    /// Names the structure being read, e.g. "hello"; used in error messages.
    let context: String
    private let bytes: ArraySlice<UInt8>
    private(set) var index: Int

    init(_ bytes: ArraySlice<UInt8>, context: String) {
        self.bytes = bytes
        self.context = context
        self.index = bytes.startIndex
    }

    /// Number of bytes not yet read.
    var remainingCount: Int { bytes.endIndex - index }

    private func truncated(_ field: String) -> WireError {
        .malformed("\(context): truncated at \(field)")
    }

    mutating func readUInt8(_ field: String) throws(WireError) -> UInt8 {
        guard remainingCount >= 1 else { throw truncated(field) }
        let value = bytes[index]
        index += 1
        return value
    }

    mutating func readUInt16(_ field: String) throws(WireError) -> UInt16 {
        UInt16(truncatingIfNeeded: try readInteger(byteCount: 2, field))
    }

    mutating func readUInt32(_ field: String) throws(WireError) -> UInt32 {
        UInt32(truncatingIfNeeded: try readInteger(byteCount: 4, field))
    }

    mutating func readUInt64(_ field: String) throws(WireError) -> UInt64 {
        try readInteger(byteCount: 8, field)
    }

    private mutating func readInteger(byteCount: Int, _ field: String) throws(WireError) -> UInt64 {
        guard remainingCount >= byteCount else { throw truncated(field) }
        var value: UInt64 = 0
        for offset in 0..<byteCount {
            value = (value << 8) | UInt64(bytes[index + offset])
        }
        index += byteCount
        return value
    }

    /// Reads exactly `count` bytes (`count` is a fixed size from the format, never a peer-supplied length).
    mutating func readBytes(count: Int, _ field: String) throws(WireError) -> [UInt8] {
        guard count >= 0, remainingCount >= count else { throw truncated(field) }
        let result = Array(bytes[index..<(index + count)])
        index += count
        return result
    }

    /// Reads the magic bytes of a packet: `badMagic` if any available byte differs (so foreign traffic is named
    /// as such even when short), `malformed` if the bytes match but end early.
    mutating func readMagic(_ magic: [UInt8]) throws(WireError) {
        for (offset, expected) in magic.enumerated() {
            guard offset < remainingCount else { throw truncated("magic") }
            guard bytes[index + offset] == expected else { throw .badMagic }
        }
        index += magic.count
    }

    /// Reads a `str8`: a u8 length, then that many bytes of UTF-8.
    ///
    /// The length is checked against `lengths` before the bytes are copied; a length outside the range or
    /// invalid UTF-8 is `invalidField`, too few bytes is `malformed`.
    mutating func readString8(_ field: String, lengths: ClosedRange<Int>) throws(WireError) -> String {
        let length = Int(try readUInt8(field))
        guard remainingCount >= length else { throw truncated(field) }
        try StringField.checkLength(length, field, lengths: lengths)
        let utf8 = bytes[index..<(index + length)]
        guard let string = String(validating: utf8, as: UTF8.self) else {
            throw .invalidField("\(field): invalid UTF-8")
        }
        index += length
        return string
    }

    /// Skips everything that is left (extension bytes of a newer minor version).
    mutating func skipRemaining() {
        index = bytes.endIndex
    }

    /// Returns the unread bytes.
    mutating func readRemaining() -> [UInt8] {
        let result = Array(bytes[index...])
        index = bytes.endIndex
        return result
    }
}
