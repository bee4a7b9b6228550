/// Reads of the fields the transfer messages share: transfer IDs, `str16` paths, 0/1 flags, counts.
extension ByteReader {
    mutating func readTransferID(_ field: String) throws(WireError) -> TransferID {
        let high = try readUInt64(field)
        return TransferID(high: high, low: try readUInt64(field))
    }

    /// Reads a `str16`: a u16 length, then that many bytes of UTF-8. Same rules as `readString8`: too few
    /// bytes is `malformed`; a length outside `lengths` or invalid UTF-8 is `invalidField`, checked before the
    /// bytes are copied.
    mutating func readString16(_ field: String, lengths: ClosedRange<Int>) throws(WireError) -> String {
        let length = Int(try readUInt16(field))
        guard remainingCount >= length else { throw .malformed("\(context): truncated at \(field)") }
        try StringField.checkLength(length, field, lengths: lengths)
        let utf8 = try readBytes(count: length, field)
        guard let string = String(validating: utf8, as: UTF8.self) else {
            throw .invalidField("\(field): invalid UTF-8")
        }
        return string
    }

    /// Reads a u8 that must be 0 (false) or 1 (true); anything else is `invalidField`.
    mutating func readFlag(_ field: String) throws(WireError) -> Bool {
        let raw = try readUInt8(field)
        guard raw <= 1 else { throw .invalidField("\(field): value \(raw), not 0 or 1") }
        return raw == 1
    }

    /// Reads a u32 element count and checks it against `counts` (`invalidField` outside).
    mutating func readCount(_ field: String, counts: ClosedRange<Int>) throws(WireError) -> Int {
        let count = Int(try readUInt32(field))
        guard counts.contains(count) else {
            throw .invalidField("\(field): \(count), not in \(counts.lowerBound)...\(counts.upperBound)")
        }
        return count
    }

    /// The capacity to reserve for `count` elements of at least `minimumElementLength` bytes each: never more
    /// than the unread bytes could hold, so a hostile count cannot make us allocate for elements never sent.
    func boundedCapacity(count: Int, minimumElementLength: Int) -> Int {
        max(0, min(count, remainingCount / max(1, minimumElementLength)))
    }
}
