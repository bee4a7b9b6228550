/// Image formats with their pixel sizes: PNG, GIF, JPEG, WebP and BMP.
extension MediaSniffer {
    static func sniffImage(_ bytes: MediaBytes) -> MediaInfo? {
        if bytes.matches([0x89, 0x50, 0x4E, 0x47, 0x0D, 0x0A, 0x1A, 0x0A], at: 0) { return png(bytes) }
        if bytes.matches("GIF87a", at: 0) || bytes.matches("GIF89a", at: 0) { return gif(bytes) }
        if bytes.matches([0xFF, 0xD8, 0xFF], at: 0) { return jpeg(bytes) }
        if bytes.matches("RIFF", at: 0), bytes.matches("WEBP", at: 8) { return webP(bytes) }
        if bytes.matches("BM", at: 0), let bmp = bmp(bytes) { return bmp }
        return nil
    }

    /// PNG: the IHDR chunk comes first; width and height are big-endian 32-bit at offsets 16 and 20.
    static func png(_ bytes: MediaBytes) -> MediaInfo {
        var info = MediaInfo(mediaType: "image/png", isCompressed: true)
        if bytes.matches("IHDR", at: 12), let width = bytes.bigEndian(at: 16, width: 4),
            let height = bytes.bigEndian(at: 20, width: 4)
        {
            info.pixelWidth = width
            info.pixelHeight = height
        }
        return info
    }

    /// GIF: the logical screen size, little-endian 16-bit at offsets 6 and 8.
    static func gif(_ bytes: MediaBytes) -> MediaInfo {
        var info = MediaInfo(mediaType: "image/gif", isCompressed: true)
        if let width = bytes.littleEndian(at: 6, width: 2), let height = bytes.littleEndian(at: 8, width: 2) {
            info.pixelWidth = width
            info.pixelHeight = height
        }
        return info
    }

    /// JPEG: walks the marker segments after SOI up to the first start-of-frame (SOF0...SOF15, except DHT 0xC4,
    /// JPG 0xC8 and DAC 0xCC, which share the range), whose payload holds precision, height, width.
    static func jpeg(_ bytes: MediaBytes) -> MediaInfo {
        var info = MediaInfo(mediaType: "image/jpeg", isCompressed: true)
        var offset = 2
        while bytes.byte(at: offset) == 0xFF {
            // Any number of 0xFF fill bytes may precede a marker.
            var markerOffset = offset + 1
            while bytes.byte(at: markerOffset) == 0xFF { markerOffset += 1 }
            guard let marker = bytes.byte(at: markerOffset) else { break }
            offset = markerOffset + 1
            switch marker {
            case 0x01, 0xD0...0xD8:
                continue  // Standalone markers (TEM, RSTn, SOI): no length field.
            case 0x00, 0xD9, 0xDA:
                return info  // Not a marker, end of image, or start of scan: no frame header before the data.
            default:
                guard let length = bytes.bigEndian(at: offset, width: 2), length >= 2 else { return info }
                if (0xC0...0xCF).contains(marker), ![0xC4, 0xC8, 0xCC].contains(marker) {
                    if let height = bytes.bigEndian(at: offset + 3, width: 2),
                        let width = bytes.bigEndian(at: offset + 5, width: 2)
                    {
                        info.pixelWidth = width
                        info.pixelHeight = height
                    }
                    return info
                }
                offset += Int(length)
            }
        }
        return info
    }

    /// WebP: RIFF "WEBP" and a first chunk that is lossy "VP8 " (14-bit sizes after the key-frame start code),
    /// lossless "VP8L" (14-bit sizes minus one after the 0x2F signature) or extended "VP8X" (24-bit canvas size
    /// minus one).
    static func webP(_ bytes: MediaBytes) -> MediaInfo {
        var info = MediaInfo(mediaType: "image/webp", isCompressed: true)
        if bytes.matches("VP8 ", at: 12), bytes.matches([0x9D, 0x01, 0x2A], at: 23),
            let width = bytes.littleEndian(at: 26, width: 2), let height = bytes.littleEndian(at: 28, width: 2)
        {
            info.pixelWidth = width & 0x3FFF
            info.pixelHeight = height & 0x3FFF
        } else if bytes.matches("VP8L", at: 12), bytes.byte(at: 20) == 0x2F,
            let bits = bytes.littleEndian(at: 21, width: 4)
        {
            info.pixelWidth = (bits & 0x3FFF) + 1
            info.pixelHeight = ((bits >> 14) & 0x3FFF) + 1
        } else if bytes.matches("VP8X", at: 12), let width = bytes.littleEndian(at: 24, width: 3),
            let height = bytes.littleEndian(at: 27, width: 3)
        {
            info.pixelWidth = width + 1
            info.pixelHeight = height + 1
        }
        return info
    }

    /// BMP: "BM", then a DIB header whose size names its version; the old 12-byte core header has 16-bit sizes,
    /// the others signed 32-bit ones (a negative height means top-down rows). Not compressed.
    static func bmp(_ bytes: MediaBytes) -> MediaInfo? {
        guard let headerSize = bytes.littleEndian(at: 14, width: 4),
            [12, 16, 40, 52, 56, 64, 108, 124].contains(headerSize)
        else { return nil }
        var info = MediaInfo(mediaType: "image/bmp", isCompressed: false)
        if headerSize == 12 {
            if let width = bytes.littleEndian(at: 18, width: 2), let height = bytes.littleEndian(at: 20, width: 2) {
                info.pixelWidth = width
                info.pixelHeight = height
            }
        } else if let width = bytes.littleEndian(at: 18, width: 4), let height = bytes.littleEndian(at: 22, width: 4) {
            info.pixelWidth = Int32(bitPattern: width).magnitude
            info.pixelHeight = Int32(bitPattern: height).magnitude
        }
        return info
    }
}
