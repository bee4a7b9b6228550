extension TestImage {
    /// A PNG of `width` x `height` 8-bit grey pixels (a diagonal gradient), with real CRCs.
    ///
    /// Layout: the 8-byte signature, then chunks `<length:4> <type:4> <data> <crc32(type + data):4>`:
    ///
    ///     IHDR  <width:4> <height:4> 08 00 00 00 00      8-bit greyscale, deflate, no interlace
    ///     IDAT  zlib stream: 78 01, stored deflate blocks (<= 65535 bytes each), Adler-32
    ///     IEND  (empty)
    ///
    /// The image data is stored uncompressed (each row: filter byte 0, then the pixels), so the file is
    /// `height * (width + 1)` bytes plus a few dozen; keep test images small.
    public static func png(width: Int, height: Int) -> [UInt8] {
        precondition(width > 0 && height > 0 && width <= 1 << 16 && height <= 1 << 16, "PNG sides are 1...65536")
        var raw: [UInt8] = []
        raw.reserveCapacity(height * (width + 1))
        for y in 0..<height {
            raw.append(0)
            for x in 0..<width { raw.append(UInt8(truncatingIfNeeded: x &+ y)) }
        }
        var bytes: [UInt8] = [0x89, 0x50, 0x4E, 0x47, 0x0D, 0x0A, 0x1A, 0x0A]
        let header =
            bigEndian32(UInt32(width)) + bigEndian32(UInt32(height)) + [0x08, 0x00, 0x00, 0x00, 0x00]
        appendChunk("IHDR", header, to: &bytes)
        appendChunk("IDAT", zlibStored(raw), to: &bytes)
        appendChunk("IEND", [], to: &bytes)
        return bytes
    }

    private static func appendChunk(_ type: String, _ data: [UInt8], to bytes: inout [UInt8]) {
        let typeBytes = Array(type.utf8)
        bytes += bigEndian32(UInt32(data.count)) + typeBytes + data
        bytes += bigEndian32(CRC32.checksum(data, continuing: CRC32.checksum(typeBytes)))
    }

    /// A zlib stream of `data` in stored (uncompressed) deflate blocks.
    private static func zlibStored(_ data: [UInt8]) -> [UInt8] {
        var stream: [UInt8] = [0x78, 0x01]
        var offset = 0
        repeat {
            let length = min(65_535, data.count - offset)
            let final: UInt8 = offset + length == data.count ? 1 : 0
            let length16 = UInt16(length)
            stream += [
                final, UInt8(length16 & 0xFF), UInt8(length16 >> 8), UInt8(~length16 & 0xFF), UInt8(~length16 >> 8),
            ]
            stream += data[offset..<(offset + length)]
            offset += length
        } while offset < data.count
        stream += bigEndian32(adler32(data))
        return stream
    }

    private static func adler32(_ data: [UInt8]) -> UInt32 {
        var a: UInt32 = 1
        var b: UInt32 = 0
        for byte in data {
            a = (a + UInt32(byte)) % 65_521
            b = (b + a) % 65_521
        }
        return b << 16 | a
    }
}
