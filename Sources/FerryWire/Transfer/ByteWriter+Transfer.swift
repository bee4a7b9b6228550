/// Writes of the fields the transfer messages share.
extension ByteWriter {
    /// Writes a `str16`. Precondition: the UTF-8 form is at most 65 535 bytes (callers validate first).
    mutating func write(string16 string: String) {
        let utf8 = string.utf8
        precondition(utf8.count <= Int(UInt16.max), "str16 longer than 65535 bytes; validate() before encoding")
        write(UInt16(utf8.count))
        bytes.append(contentsOf: utf8)
    }

    mutating func write(flag: Bool) {
        write(flag ? UInt8(1) : 0)
    }

    mutating func write(_ transferID: TransferID) {
        write(transferID.high)
        write(transferID.low)
    }
}
