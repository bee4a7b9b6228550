/// CRC-32 (IEEE 802.3, reflected, polynomial 0xEDB88320) from a 256-entry table, for PNG chunks.
///
/// Why hand-written: test support builds PNG files without linking zlib; this is test code only (the
/// product uses zlib's `crc32`). Check value: CRC-32("123456789") == 0xCBF43926.
enum CRC32 {
    private static let table: [UInt32] = (0..<256).map { index in
        var value = UInt32(index)
        for _ in 0..<8 {
            value = value & 1 == 1 ? 0xEDB8_8320 ^ (value >> 1) : value >> 1
        }
        return value
    }

    /// The CRC-32 of `bytes`, continuing from `previous` (0 to start).
    static func checksum(_ bytes: some Sequence<UInt8>, continuing previous: UInt32 = 0) -> UInt32 {
        var crc = ~previous
        for byte in bytes {
            crc = table[Int((crc ^ UInt32(byte)) & 0xFF)] ^ (crc >> 8)
        }
        return ~crc
    }
}
