/// Appends big-endian integers, fixed byte fields and `str8` strings to a byte array.
///
/// The counterpart of `ByteReader`; message codecs write through it so each codec is a short list of fields.
struct ByteWriter {
    var bytes: [UInt8]

    init(reservingCapacity capacity: Int = 0) {
        bytes = []
        bytes.reserveCapacity(capacity)
    }

    /// Runs `body` with a writer that appends to `buffer` in place (no copy of what is already there).
    static func append(to buffer: inout [UInt8], _ body: (inout ByteWriter) -> Void) {
        var writer = ByteWriter()
        swap(&writer.bytes, &buffer)
        body(&writer)
        swap(&writer.bytes, &buffer)
    }

    mutating func write(_ value: UInt8) {
        bytes.append(value)
    }

    mutating func write(_ value: UInt16) {
        bytes.append(UInt8(truncatingIfNeeded: value >> 8))
        bytes.append(UInt8(truncatingIfNeeded: value))
    }

    mutating func write(_ value: UInt32) {
        for shift in stride(from: 24, through: 0, by: -8) {
            bytes.append(UInt8(truncatingIfNeeded: value >> UInt32(shift)))
        }
    }

    mutating func write(_ value: UInt64) {
        for shift in stride(from: 56, through: 0, by: -8) {
            bytes.append(UInt8(truncatingIfNeeded: value >> UInt64(shift)))
        }
    }

    mutating func write<Bytes: Sequence<UInt8>>(bytes more: Bytes) {
        bytes.append(contentsOf: more)
    }

    /// Writes a `str8`. Precondition: the UTF-8 form is at most 255 bytes (callers validate first).
    mutating func write(string8 string: String) {
        let utf8 = string.utf8
        precondition(utf8.count <= Int(UInt8.max), "str8 longer than 255 bytes; validate() before encoding")
        bytes.append(UInt8(utf8.count))
        bytes.append(contentsOf: utf8)
    }
}
