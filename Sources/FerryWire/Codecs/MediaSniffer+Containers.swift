/// Container formats: ISO base media (HEIF, AVIF, MP4, QuickTime, M4A), Matroska/WebM, ZIP and its office and
/// Java variants, and RIFF audio and video.
extension MediaSniffer {
    static func sniffContainer(_ bytes: MediaBytes) -> MediaInfo? {
        if bytes.matches("ftyp", at: 4) { return isoMedia(bytes) }
        if bytes.matches([0x1A, 0x45, 0xDF, 0xA3], at: 0) { return matroska(bytes) }
        if bytes.matches("PK", at: 0), let kind = bytes.bigEndian(at: 2, width: 2),
            [0x0304, 0x0506, 0x0708].contains(kind)
        {
            return MediaInfo(mediaType: zipType(bytes), isCompressed: true)
        }
        if bytes.matches("RIFF", at: 0) {
            if bytes.matches("WAVE", at: 8) { return MediaInfo(mediaType: "audio/wav", isCompressed: false) }
            if bytes.matches("AVI ", at: 8) { return MediaInfo(mediaType: "video/x-msvideo", isCompressed: true) }
        }
        return nil
    }

    /// ISO base media file format: a leading `ftyp` box whose major brand (offset 8), and for the generic HEIF
    /// brands the compatible brands (from offset 16 to the end of the box), name the format.
    static func isoMedia(_ bytes: MediaBytes) -> MediaInfo? {
        guard let major = bytes.ascii(at: 8, length: 4) else { return nil }
        var compatible: [String] = []
        let boxEnd = min(Int(bytes.bigEndian(at: 0, width: 4) ?? 0), bytes.count, 256)
        var offset = 16
        while offset + 4 <= boxEnd {
            if let brand = bytes.ascii(at: offset, length: 4) { compatible.append(brand) }
            offset += 4
        }
        return MediaInfo(mediaType: isoMediaType(major: major, compatible: compatible), isCompressed: true)
    }

    static func isoMediaType(major: String, compatible: [String]) -> String {
        switch major {
        case "avif", "avis":
            return "image/avif"
        case "heic", "heix", "heim", "heis":
            return "image/heic"
        case "hevc", "hevx":
            return "image/heic-sequence"
        case "mif1", "msf1":
            if compatible.contains("avif") || compatible.contains("avis") { return "image/avif" }
            if compatible.contains(where: { ["heic", "heix", "heim", "heis"].contains($0) }) { return "image/heic" }
            return major == "mif1" ? "image/heif" : "image/heif-sequence"
        case "qt  ":
            return "video/quicktime"
        case "M4A ", "M4B ", "M4P ":
            return "audio/mp4"
        case _ where major.hasPrefix("3g2"):
            return "video/3gpp2"
        case _ where major.hasPrefix("3gp"):
            return "video/3gpp"
        default:
            return "video/mp4"  // isom, iso2...iso9, mp41, mp42, avc1, dash, M4V and other MP4 brands.
        }
    }

    /// Matroska or WebM: the EBML header's DocType element (ID 0x4282, a variable-length size, the text).
    static func matroska(_ bytes: MediaBytes) -> MediaInfo {
        var type = "video/x-matroska"
        if let element = bytes.firstOffset(of: [0x42, 0x82], before: 64), let sizeByte = bytes.byte(at: element + 2),
            sizeByte != 0
        {
            let sizeLength = sizeByte.leadingZeroBitCount + 1
            if bytes.matches("webm", at: element + 2 + sizeLength) { type = "video/webm" }
        }
        return MediaInfo(mediaType: type, isCompressed: true)
    }

    /// ZIP, or a format built on it, from the first local file header's name (offset 30, length at 26) and, for
    /// office documents, the names of their main parts anywhere in the prefix.
    static func zipType(_ bytes: MediaBytes) -> String {
        guard bytes.matches([0x50, 0x4B, 0x03, 0x04], at: 0), let nameLength = bytes.littleEndian(at: 26, width: 2),
            let extraLength = bytes.littleEndian(at: 28, width: 2),
            let name = bytes.ascii(at: 30, length: Int(nameLength))
        else { return "application/zip" }
        if name == "mimetype", bytes.littleEndian(at: 8, width: 2) == 0,
            let size = bytes.littleEndian(at: 18, width: 4), (1...100).contains(size),
            let declared = bytes.ascii(at: 30 + Int(nameLength) + Int(extraLength), length: Int(size)),
            declared.hasPrefix("application/")
        {
            return declared  // EPUB, OpenDocument: a stored "mimetype" entry comes first.
        }
        if name == "AndroidManifest.xml" { return "application/vnd.android.package-archive" }
        if name.hasPrefix("META-INF/") { return "application/java-archive" }
        if name == "[Content_Types].xml" || name.hasPrefix("_rels/") || name.hasPrefix("docProps/") {
            let parts = [
                ("word/document.xml", "application/vnd.openxmlformats-officedocument.wordprocessingml.document"),
                ("xl/workbook.xml", "application/vnd.openxmlformats-officedocument.spreadsheetml.sheet"),
                ("ppt/presentation.xml", "application/vnd.openxmlformats-officedocument.presentationml.presentation"),
            ]
            for (part, type) in parts where bytes.firstOffset(of: Array(part.utf8), before: bytes.count) != nil {
                return type
            }
        }
        return "application/zip"
    }
}
