import Testing

@testable import FerryWire

@Suite("Codec media sniffer")
struct CodecSnifferTests {
    struct Case: Sendable, CustomTestStringConvertible {
        var name: String
        var bytes: [UInt8]
        var expected: MediaInfo
        var testDescription: String { name }

        init(
            _ name: String, _ bytes: [UInt8], _ type: String?, compressed: Bool = true, size: (UInt32, UInt32) = (0, 0)
        ) {
            self.name = name
            self.bytes = bytes
            expected = MediaInfo(mediaType: type, isCompressed: compressed, pixelWidth: size.0, pixelHeight: size.1)
        }
    }

    static func ascii(_ text: String) -> [UInt8] { Array(text.utf8) }
    static func be16(_ value: Int) -> [UInt8] { [UInt8(value >> 8 & 0xFF), UInt8(value & 0xFF)] }
    static func be32(_ value: Int) -> [UInt8] { be16(value >> 16) + be16(value) }
    static func le16(_ value: Int) -> [UInt8] { be16(value).reversed() }
    static func le24(_ value: Int) -> [UInt8] { Array(le32(value).prefix(3)) }
    static func le32(_ value: Int) -> [UInt8] { be32(value).reversed() }
    static func zeros(_ count: Int) -> [UInt8] { [UInt8](repeating: 0, count: count) }

    static let png =
        [0x89, 0x50, 0x4E, 0x47, 0x0D, 0x0A, 0x1A, 0x0A] + be32(13) + ascii("IHDR") + be32(640)
        + be32(480) + [8, 6, 0, 0, 0]

    /// SOI, APP0 (JFIF), a DHT (0xC4, which must be skipped), fill bytes, then `sof` with 600 x 800 (h x w).
    static func jpeg(sof: UInt8) -> [UInt8] {
        [0xFF, 0xD8] + [0xFF, 0xE0] + be16(16) + ascii("JFIF") + zeros(10)
            + [0xFF, 0xC4] + be16(5) + [0, 1, 2] + [0xFF, 0xFF, 0xFF, sof] + be16(17) + [8] + be16(600) + be16(800)
            + [3] + zeros(9)
    }

    static func webP(_ chunk: String, _ payload: [UInt8]) -> [UInt8] {
        ascii("RIFF") + le32(4 + 8 + payload.count) + ascii("WEBP") + ascii(chunk) + le32(payload.count) + payload
    }

    static func ftyp(_ major: String, _ compatible: [String] = []) -> [UInt8] {
        be32(16 + 4 * compatible.count) + ascii("ftyp") + ascii(major) + be32(0) + compatible.flatMap(ascii)
    }

    static func zip(_ name: String, method: Int = 8, content: [UInt8] = []) -> [UInt8] {
        [0x50, 0x4B, 0x03, 0x04] + le16(20) + le16(0) + le16(method) + le32(0) + le32(0) + le32(content.count)
            + le32(content.count) + le16(name.utf8.count) + le16(0) + ascii(name) + content
    }

    static let vp8Frame: [UInt8] = [0x10, 0x02, 0x00, 0x9D, 0x01, 0x2A] + le16(320) + le16(240) + zeros(4)
    static let vp8lBits = (320 - 1) | (240 - 1) << 14

    static let cases: [Case] = [
        Case("PNG", png, "image/png", size: (640, 480)),
        Case("GIF87a", ascii("GIF87a") + le16(31) + le16(17) + [0, 0, 0], "image/gif", size: (31, 17)),
        Case("GIF89a", ascii("GIF89a") + le16(1024) + le16(768) + [0, 0, 0], "image/gif", size: (1024, 768)),
        Case("JPEG baseline", jpeg(sof: 0xC0), "image/jpeg", size: (800, 600)),
        Case("JPEG progressive", jpeg(sof: 0xC2), "image/jpeg", size: (800, 600)),
        Case("JPEG lossless SOF15", jpeg(sof: 0xCF), "image/jpeg", size: (800, 600)),
        Case("JPEG without SOF", [0xFF, 0xD8, 0xFF, 0xE0] + be16(4) + [0, 0, 0xFF, 0xDA], "image/jpeg"),
        Case("WebP lossy", webP("VP8 ", vp8Frame), "image/webp", size: (320, 240)),
        Case("WebP lossless", webP("VP8L", [0x2F] + le32(vp8lBits) + [0]), "image/webp", size: (320, 240)),
        Case(
            "WebP extended", webP("VP8X", [0x10, 0, 0, 0] + le24(4095) + le24(2159)), "image/webp", size: (4096, 2160)),
        Case(
            "BMP", ascii("BM") + zeros(12) + le32(40) + le32(100) + le32(-50) + le16(1), "image/bmp",
            compressed: false, size: (100, 50)),
        Case(
            "BMP core", ascii("BM") + zeros(12) + le32(12) + le16(64) + le16(32) + le16(1), "image/bmp",
            compressed: false, size: (64, 32)),
        Case("HEIC", ftyp("heic", ["mif1", "heic"]), "image/heic"),
        Case("HEIF mif1+heic", ftyp("mif1", ["mif1", "heic"]), "image/heic"),
        Case("HEIF", ftyp("mif1", ["mif1"]), "image/heif"),
        Case("HEIF sequence", ftyp("msf1", ["msf1"]), "image/heif-sequence"),
        Case("AVIF", ftyp("avif", ["avif", "mif1", "miaf"]), "image/avif"),
        Case("AVIF via mif1", ftyp("mif1", ["avif"]), "image/avif"),
        Case("AVIF sequence", ftyp("avis", ["avis"]), "image/avif"),
        Case("MP4", ftyp("isom", ["isom", "iso2", "avc1", "mp41"]), "video/mp4"),
        Case("MP4 mp42", ftyp("mp42"), "video/mp4"),
        Case("MOV", ftyp("qt  ", ["qt  "]), "video/quicktime"),
        Case("M4A", ftyp("M4A ", ["M4A ", "mp42", "isom"]), "audio/mp4"),
        Case("3GP", ftyp("3gp5"), "video/3gpp"),
        Case(
            "MKV", [0x1A, 0x45, 0xDF, 0xA3, 0x9F, 0x42, 0x86, 0x81, 0x01, 0x42, 0x82, 0x88] + ascii("matroska"),
            "video/x-matroska"),
        Case(
            "WebM", [0x1A, 0x45, 0xDF, 0xA3, 0x9F, 0x42, 0x86, 0x81, 0x01, 0x42, 0x82, 0x84] + ascii("webm"),
            "video/webm"),
        Case("ZIP", zip("hello.txt"), "application/zip"),
        Case("empty ZIP", [0x50, 0x4B, 0x05, 0x06] + zeros(18), "application/zip"),
        Case(
            "DOCX", zip("[Content_Types].xml") + zip("word/document.xml"),
            "application/vnd.openxmlformats-officedocument.wordprocessingml.document"),
        Case(
            "XLSX", zip("[Content_Types].xml") + zip("xl/workbook.xml"),
            "application/vnd.openxmlformats-officedocument.spreadsheetml.sheet"),
        Case("JAR", zip("META-INF/MANIFEST.MF"), "application/java-archive"),
        Case("EPUB", zip("mimetype", method: 0, content: ascii("application/epub+zip")), "application/epub+zip"),
        Case("gzip", [0x1F, 0x8B, 0x08, 0x00] + zeros(6), "application/gzip"),
        Case("xz", [0xFD, 0x37, 0x7A, 0x58, 0x5A, 0x00, 0x00, 0x04], "application/x-xz"),
        Case("zstd", [0x28, 0xB5, 0x2F, 0xFD, 0x20, 0x00], "application/zstd"),
        Case("bzip2", ascii("BZh91AY&SY"), "application/x-bzip2"),
        Case("7z", [0x37, 0x7A, 0xBC, 0xAF, 0x27, 0x1C, 0x00, 0x04], "application/x-7z-compressed"),
        Case("RAR 4", ascii("Rar!") + [0x1A, 0x07, 0x00], "application/vnd.rar"),
        Case("RAR 5", ascii("Rar!") + [0x1A, 0x07, 0x01, 0x00], "application/vnd.rar"),
        Case("MP3 ID3", ascii("ID3") + [4, 0, 0] + zeros(4), "audio/mpeg"),
        Case("MP3 frame", [0xFF, 0xFB, 0x90, 0x64] + zeros(4), "audio/mpeg"),
        Case("AAC ADTS", [0xFF, 0xF1, 0x50, 0x80, 0x02, 0x1F, 0xFC], "audio/aac"),
        Case("OGG", ascii("OggS") + [0, 2] + zeros(8), "audio/ogg"),
        Case("FLAC", ascii("fLaC") + [0, 0, 0, 0x22], "audio/flac"),
        Case("PDF", ascii("%PDF-1.7\n"), "application/pdf", compressed: false),
        Case("TIFF", [0x49, 0x49, 0x2A, 0x00, 8, 0, 0, 0], "image/tiff", compressed: false),
        Case("WAV", ascii("RIFF") + le32(36) + ascii("WAVEfmt "), "audio/wav", compressed: false),
        Case("text", ascii("hello, world\n"), nil, compressed: false),
        Case("empty", [], nil, compressed: false),
        Case("BM without a DIB header", ascii("BM") + zeros(30), nil, compressed: false),
        Case("bare FF", [0xFF], nil, compressed: false),
    ]

    @Test(arguments: cases)
    func sniff(_ sample: Case) {
        #expect(MediaSniffer.sniff(sample.bytes) == sample.expected)
        // The answer does not depend on where the slice starts.
        let shifted = [0xAA, 0xBB] + sample.bytes
        #expect(MediaSniffer.sniff(shifted[2...]) == sample.expected)
    }

    /// Every prefix of every sample gives some answer without trapping, and once the magic number is complete the
    /// type stays the same (sizes may still be missing).
    @Test(arguments: cases)
    func everyTruncatedPrefix(_ sample: Case) {
        var sawType = false
        for length in 0...sample.bytes.count {
            let info = MediaSniffer.sniff(sample.bytes[..<length])
            if info.mediaType == sample.expected.mediaType, info.mediaType != nil { sawType = true }
            if sawType { #expect(info.mediaType == sample.expected.mediaType) }
        }
    }

    @Test func jpegWalkStaysInBounds() {
        // A segment length that points past the end, a zero length, endless fill bytes.
        #expect(MediaSniffer.sniff([0xFF, 0xD8, 0xFF, 0xE0, 0xFF, 0xFF]).pixelWidth == 0)
        #expect(MediaSniffer.sniff([0xFF, 0xD8, 0xFF, 0xE0, 0x00, 0x00, 0xFF, 0xC0]).pixelWidth == 0)
        #expect(MediaSniffer.sniff([0xFF, 0xD8] + [UInt8](repeating: 0xFF, count: 1000)).mediaType == "image/jpeg")
        let cut = Self.jpeg(sof: 0xC0).prefix(36)  // SOF cut off inside its width.
        #expect(MediaSniffer.sniff(cut) == MediaInfo(mediaType: "image/jpeg", isCompressed: true))
    }

    /// The first 4 KiB give the same answer as 64 KiB for every sample followed by 60 KiB of anything, unless
    /// `needsMore` asks for the rest (what a sender reads of each file it offers: `PreparedFile.prepare`).
    @Test(arguments: cases)
    func theHeadAnswersUnlessItAsksForMore(_ sample: Case) {
        var generator = SeededBytes(seed: UInt64(sample.bytes.count))
        for filler in [Self.zeros(60 << 10), (0..<(60 << 10)).map { _ in generator.next() }] {
            let prefix = sample.bytes + filler
            let head = prefix.prefix(MediaSniffer.headLength)
            if MediaSniffer.needsMore(head) { continue }
            let (short, full) = (MediaSniffer.sniff(head), MediaSniffer.sniff(prefix))
            #expect(short == full, "\(sample.name)")
        }
    }

    /// Where the head is not enough, it says so: a JPEG whose size comes after 10 KiB of EXIF, a ZIP whose part
    /// names come after 4 KiB.
    @Test func aJPEGOrAZIPAsksForMore() {
        let exif = [0xFF, 0xE1] + Self.be16(10_002) + Self.zeros(10_000)
        let jpeg = Array(Self.jpeg(sof: 0xC0).prefix(2)) + exif + Array(Self.jpeg(sof: 0xC0).dropFirst(2))
        let head = jpeg.prefix(MediaSniffer.headLength)
        let jpegAsks = MediaSniffer.needsMore(head)  // (not inside #expect: it would print 4096 bytes)
        #expect(jpegAsks)
        #expect(MediaSniffer.sniff(head).pixelWidth == 0 && MediaSniffer.sniff(jpeg).pixelWidth == 800)
        let document = Self.zip("[Content_Types].xml") + Self.zeros(5000) + Self.zip("word/document.xml")
        let documentHead = document.prefix(MediaSniffer.headLength)
        let zipAsks = MediaSniffer.needsMore(documentHead)
        #expect(zipAsks)
        let (shortAnswer, fullAnswer) = (MediaSniffer.sniff(documentHead), MediaSniffer.sniff(document))
        #expect(shortAnswer != fullAnswer)
        let others = MediaSniffer.needsMore(Self.png[...]) || MediaSniffer.needsMore(Self.zeros(4096)[...])
        #expect(!others)
    }

    /// Deterministic filler bytes (xorshift).
    struct SeededBytes {
        var state: UInt64
        init(seed: UInt64) { state = seed &* 0x9E37_79B9_7F4A_7C15 | 1 }
        mutating func next() -> UInt8 {
            state ^= state << 13
            state ^= state >> 7
            state ^= state << 17
            return UInt8(truncatingIfNeeded: state)
        }
    }

    @Test func onlyTheFirst64KiBCount() {
        let late =
            Self.zip("[Content_Types].xml") + Self.zeros(MediaSniffer.prefixLength) + Self.zip("word/document.xml")
        #expect(MediaSniffer.sniff(late).mediaType == "application/zip")
    }
}
