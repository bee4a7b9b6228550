/// Recognises a file's format from its first bytes (magic numbers), and for images reads the pixel size.
///
/// The compression policy needs to know, before the first chunk, whether a file is already compressed (JPEG, PNG,
/// MP4, ZIP, ...: compressing it again burns CPU for nothing), and an offer shows the media type and image size.
/// Signatures only, never file names: names from a peer prove nothing. PDF is recognised but not treated as
/// compressed, since its text and metadata usually still shrink. Every read is bounds-checked; any input, however
/// short or hostile, gives an answer (at worst `MediaInfo.unknown`).
public enum MediaSniffer {
    /// How many first bytes of a file the sniffer looks at; callers pass up to this many.
    public static let prefixLength = 65_536

    /// How many first bytes give the same answer as `prefixLength` for every format but two (`needsMore`): every
    /// other signature, box and header read is within the first 256 bytes. A sender reads this much of each file it
    /// offers, and more only when `needsMore` says so: for a folder of small files the offer read each whole file
    /// (then read again to send it).
    public static let headLength = 4096

    /// Whether more than the first `headLength` bytes of a file may change the answer: a JPEG, whose pixel size
    /// comes after its metadata segments (an EXIF block can fill 64 KiB), or a ZIP, whose kind (a document, a
    /// package) is read from the names of its parts. Then the caller passes up to `prefixLength`.
    public static func needsMore(_ head: ArraySlice<UInt8>) -> Bool {
        let bytes = MediaBytes(head)
        return bytes.matches([0xFF, 0xD8, 0xFF], at: 0) || bytes.matches("PK", at: 0)
    }

    /// From the first bytes of a file (up to `prefixLength`; more are ignored): the media type or nil, whether it
    /// is already compressed, and for images the pixel size.
    public static func sniff(_ prefix: ArraySlice<UInt8>) -> MediaInfo {
        let bytes = MediaBytes(prefix.prefix(prefixLength))
        if let image = sniffImage(bytes) { return image }
        if let container = sniffContainer(bytes) { return container }
        for signature in signatures where bytes.matches(signature.magic, at: signature.offset) {
            return MediaInfo(mediaType: signature.mediaType, isCompressed: signature.isCompressed)
        }
        if let bzip2 = sniffBzip2(bytes) { return bzip2 }
        if let audio = sniffAudioFrame(bytes) { return audio }
        return .unknown
    }

    /// From the first bytes of a file; see `sniff(_:)` on a slice.
    public static func sniff(_ prefix: [UInt8]) -> MediaInfo {
        sniff(prefix[...])
    }

    /// A fixed magic number at a fixed offset.
    struct Signature {
        var offset = 0
        var magic: [UInt8]
        var mediaType: String
        var isCompressed = true
    }

    /// Formats recognised by a fixed magic number alone, tried in order.
    static let signatures: [Signature] = [
        Signature(magic: [0x1F, 0x8B], mediaType: "application/gzip"),
        Signature(magic: [0xFD, 0x37, 0x7A, 0x58, 0x5A, 0x00], mediaType: "application/x-xz"),
        Signature(magic: [0x28, 0xB5, 0x2F, 0xFD], mediaType: "application/zstd"),
        Signature(magic: [0x37, 0x7A, 0xBC, 0xAF, 0x27, 0x1C], mediaType: "application/x-7z-compressed"),
        Signature(magic: Array("Rar!".utf8) + [0x1A, 0x07], mediaType: "application/vnd.rar"),
        Signature(magic: [0x04, 0x22, 0x4D, 0x18], mediaType: "application/x-lz4"),
        Signature(magic: Array("OggS".utf8), mediaType: "audio/ogg"),
        Signature(magic: Array("fLaC".utf8), mediaType: "audio/flac"),
        Signature(magic: Array("ID3".utf8), mediaType: "audio/mpeg"),
        Signature(magic: Array("wOF2".utf8), mediaType: "font/woff2"),
        Signature(magic: Array("wOFF".utf8), mediaType: "font/woff"),
        Signature(magic: [0xFF, 0x0A], mediaType: "image/jxl"),
        Signature(
            magic: [0x00, 0x00, 0x00, 0x0C, 0x4A, 0x58, 0x4C, 0x20, 0x0D, 0x0A, 0x87, 0x0A], mediaType: "image/jxl"),
        Signature(magic: Array("%PDF-".utf8), mediaType: "application/pdf", isCompressed: false),
        Signature(magic: [0x49, 0x49, 0x2A, 0x00], mediaType: "image/tiff", isCompressed: false),
        Signature(magic: [0x4D, 0x4D, 0x00, 0x2A], mediaType: "image/tiff", isCompressed: false),
    ]

    /// bzip2: "BZh" and a block-size digit 1...9.
    static func sniffBzip2(_ bytes: MediaBytes) -> MediaInfo? {
        guard bytes.matches("BZh", at: 0), let level = bytes.byte(at: 3), (0x31...0x39).contains(level) else {
            return nil
        }
        return MediaInfo(mediaType: "application/x-bzip2", isCompressed: true)
    }

    /// An MPEG audio frame header (MP3 without an ID3 tag) or an ADTS header (raw AAC): a sync word of 11 set
    /// bits and no reserved values in the version, layer, bit rate and sample rate fields.
    static func sniffAudioFrame(_ bytes: MediaBytes) -> MediaInfo? {
        guard bytes.byte(at: 0) == 0xFF, let second = bytes.byte(at: 1), let third = bytes.byte(at: 2),
            second & 0xE0 == 0xE0
        else { return nil }
        let version = (second >> 3) & 0x03
        let layer = (second >> 1) & 0x03
        if layer == 0 {
            // ADTS: MPEG-2/4 AAC, sampling frequency index 0...12.
            guard second & 0xF6 == 0xF0, (third >> 2) & 0x0F <= 12 else { return nil }
            return MediaInfo(mediaType: "audio/aac", isCompressed: true)
        }
        guard version != 0x01, third >> 4 != 0x0F, (third >> 2) & 0x03 != 0x03 else { return nil }
        return MediaInfo(mediaType: "audio/mpeg", isCompressed: true)
    }
}
