/// Bounds-checked random access to the first bytes of a file, for `MediaSniffer`.
///
/// Offsets are relative to the start of the prefix; every read returns nil instead of trapping when it would run
/// past the end (or before the start), so hostile headers can only end a sniff early.
struct MediaBytes {
    private let bytes: ArraySlice<UInt8>

    init(_ bytes: ArraySlice<UInt8>) {
        self.bytes = bytes
    }

    var count: Int { bytes.count }

    /// Whether `length` bytes at `offset` are all present.
    func contains(_ offset: Int, length: Int) -> Bool {
        offset >= 0 && length >= 0 && offset <= count && length <= count - offset
    }

    func byte(at offset: Int) -> UInt8? {
        contains(offset, length: 1) ? bytes[bytes.startIndex + offset] : nil
    }

    /// A big-endian unsigned integer of `width` (1...4) bytes.
    func bigEndian(at offset: Int, width: Int) -> UInt32? {
        guard (1...4).contains(width), contains(offset, length: width) else { return nil }
        let start = bytes.startIndex + offset
        return bytes[start..<start + width].reduce(0) { $0 << 8 | UInt32($1) }
    }

    /// A little-endian unsigned integer of `width` (1...4) bytes.
    func littleEndian(at offset: Int, width: Int) -> UInt32? {
        guard (1...4).contains(width), contains(offset, length: width) else { return nil }
        let start = bytes.startIndex + offset
        return bytes[start..<start + width].reversed().reduce(0) { $0 << 8 | UInt32($1) }
    }

    func matches(_ pattern: [UInt8], at offset: Int) -> Bool {
        guard contains(offset, length: pattern.count) else { return false }
        let start = bytes.startIndex + offset
        return bytes[start..<start + pattern.count].elementsEqual(pattern)
    }

    func matches(_ ascii: String, at offset: Int) -> Bool {
        matches(Array(ascii.utf8), at: offset)
    }

    /// `length` bytes at `offset` as text, when they are all printable ASCII.
    func ascii(at offset: Int, length: Int) -> String? {
        guard contains(offset, length: length) else { return nil }
        let start = bytes.startIndex + offset
        let slice = bytes[start..<start + length]
        guard slice.allSatisfy({ (0x20...0x7E).contains($0) }) else { return nil }
        return String(decoding: slice, as: UTF8.self)
    }

    /// The first offset of `pattern` that starts before `limit`.
    func firstOffset(of pattern: [UInt8], before limit: Int) -> Int? {
        guard !pattern.isEmpty, let first = pattern.first else { return nil }
        var offset = 0
        while offset < min(limit, count) {
            if byte(at: offset) == first, matches(pattern, at: offset) { return offset }
            offset += 1
        }
        return nil
    }
}
