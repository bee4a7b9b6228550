import CZlib

/// CRC-32 (ISO-HDLC, the IEEE polynomial used by zlib, gzip and PNG) of a chunk's bytes.
///
/// Each chunk carries this checksum so a receiver can tell a damaged chunk from a good one before it is written;
/// zlib's table-driven `crc32_z` does the work (no home-made CRC). Check value: "123456789" -> 0xCBF43926.
public enum CRC32 {
    /// The CRC-32 of `bytes`.
    public static func checksum(_ bytes: UnsafeRawBufferPointer) -> UInt32 {
        update(0, bytes)
    }

    /// The CRC-32 of `bytes` (an array, an array slice or any other sequence of bytes).
    public static func checksum(_ bytes: some Sequence<UInt8>) -> UInt32 {
        update(0, bytes)
    }

    /// Continues `crc` (the checksum of the bytes so far, 0 to start) over `bytes`.
    public static func update(_ crc: UInt32, _ bytes: UnsafeRawBufferPointer) -> UInt32 {
        guard let base = bytes.baseAddress, !bytes.isEmpty else { return crc }
        // crc32_z takes a size_t length, so no piecewise feeding is needed for large buffers.
        let result = crc32_z(uLong(crc), base.assumingMemoryBound(to: Bytef.self), z_size_t(bytes.count))
        return UInt32(truncatingIfNeeded: result)
    }

    /// Continues `crc` over a sequence of bytes; contiguous storage is used in place, anything else is copied.
    public static func update(_ crc: UInt32, _ bytes: some Sequence<UInt8>) -> UInt32 {
        if let result = bytes.withContiguousStorageIfAvailable({ update(crc, UnsafeRawBufferPointer($0)) }) {
            return result
        }
        return Array(bytes).withUnsafeBytes { update(crc, $0) }
    }
}
