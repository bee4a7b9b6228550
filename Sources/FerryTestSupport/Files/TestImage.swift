/// Tiny but structurally valid image files for sniffers and media-type tests.
///
/// Why: the transfer offer carries a media type and image dimensions read from the file's header, and
/// compression is skipped for already-compressed images; tests need such files of any size without
/// shipping binaries or linking an image library.
///
/// JPEG (baseline, one grey component, every 8x8 block a flat mid-grey):
///
///     FF D8                               SOI
///     FF E0 0010 "JFIF\0" 0101 00 0001 0001 0000            APP0, JFIF 1.1, no thumbnail
///     FF DB 0043 00 <64 x 0x01>           DQT, table 0, 8-bit, all ones
///     FF C0 000B 08 <height:2> <width:2> 01 01 11 00        SOF0, 8-bit, 1 component
///     FF C4 0026 00 <counts:16 = 1,0...> 00 10 <counts:16 = 1,0...> 00    DHT: DC 0 and AC 0, one code each
///     FF DA 0008 01 01 00 00 3F 00        SOS, 1 component, spectral 0...63
///     <scan: 2 zero bits per block (DC diff 0, EOB), padded with one bits>
///     FF D9                               EOI
public enum TestImage {
    /// A baseline JPEG of `width` x `height` pixels (each 1...65535).
    public static func jpeg(width: Int, height: Int) -> [UInt8] {
        var bytes = jpegHeader(width: width, height: height)
        let blocks = ((width + 7) / 8) * ((height + 7) / 8)
        let bits = blocks * 2
        var scan = [UInt8](repeating: 0x00, count: (bits + 7) / 8)
        if bits % 8 != 0 { scan[scan.count - 1] = UInt8(0xFF >> (bits % 8)) }  // pad the last byte with ones
        bytes += scan
        bytes += [0xFF, 0xD9]
        return bytes
    }

    /// The bytes of `jpeg(width:height:)` before the scan: SOI to the end of SOS (what sniffers read).
    public static func jpegHeader(width: Int, height: Int) -> [UInt8] {
        precondition((1...65_535).contains(width) && (1...65_535).contains(height), "JPEG sides are 1...65535")
        var bytes: [UInt8] = [0xFF, 0xD8]
        bytes += [0xFF, 0xE0, 0x00, 0x10] + Array("JFIF".utf8) + [0x00, 0x01, 0x01, 0x00, 0x00, 0x01, 0x00, 0x01]
        bytes += [0x00, 0x00]
        bytes += [0xFF, 0xDB, 0x00, 0x43, 0x00] + [UInt8](repeating: 0x01, count: 64)
        bytes += [0xFF, 0xC0, 0x00, 0x0B, 0x08] + bigEndian16(height) + bigEndian16(width) + [0x01, 0x01, 0x11, 0x00]
        let oneCode = [UInt8(1)] + [UInt8](repeating: 0, count: 15) + [0x00]  // one code of length 1, value 0
        bytes += [0xFF, 0xC4, 0x00, 0x26, 0x00] + oneCode + [0x10] + oneCode
        bytes += [0xFF, 0xDA, 0x00, 0x08, 0x01, 0x01, 0x00, 0x00, 0x3F, 0x00]
        return bytes
    }

    static func bigEndian16(_ value: Int) -> [UInt8] {
        [UInt8(truncatingIfNeeded: value >> 8), UInt8(truncatingIfNeeded: value)]
    }

    static func bigEndian32(_ value: UInt32) -> [UInt8] {
        [
            UInt8(truncatingIfNeeded: value >> 24), UInt8(truncatingIfNeeded: value >> 16),
            UInt8(truncatingIfNeeded: value >> 8), UInt8(truncatingIfNeeded: value),
        ]
    }
}
