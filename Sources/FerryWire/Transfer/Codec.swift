/// How the data of one chunk is encoded (u8 on the wire).
///
/// An open set, so a chunk with a codec from a newer peer decodes and is carried; the transfer engine then
/// rejects it because the codec was never negotiated (a sender only uses codecs of the receiver's reply).
///
/// | value | codec |
/// | --- | --- |
/// | 0 | none: the raw bytes |
/// | 1 | zlib: raw deflate (RFC 1951), no zlib or gzip header |
/// | 2 | zstd: one zstd frame (RFC 8878) |
/// | 3 | zstdPrefixed: one zstd frame whose matches may reach into the file's previous chunk (its raw bytes, the
///   prefix; PROTOCOL.md 11.2) |
public struct Codec: RawRepresentable, Hashable, Sendable, CustomStringConvertible {
    /// The codec as sent in a chunk header.
    public var rawValue: UInt8

    /// Any value: an unknown codec is carried (and refused where a chunk is inflated).
    public init(rawValue: UInt8) {
        self.rawValue = rawValue
    }

    /// Raw bytes, not compressed.
    public static let none = Codec(rawValue: 0)
    /// Raw deflate (RFC 1951), without a zlib or gzip header.
    public static let zlib = Codec(rawValue: 1)
    /// One zstd frame (RFC 8878).
    public static let zstd = Codec(rawValue: 2)
    /// One zstd frame compressed with the raw bytes of the file's previous chunk as its prefix (zstd's
    /// `ZSTD_CCtx_refPrefix`): only for a chunk whose previous chunk was the chunk frame sent just before it in the
    /// same transfer (PROTOCOL.md 11.2, 11.10 rule 3).
    public static let zstdPrefixed = Codec(rawValue: 3)

    /// The codec's name (`none`, `zlib`, `zstd`, `zstd-prefixed`), or its number when unknown (`9`): texts say
    /// "codec \(codec)", so the word is not repeated ("codec 9", never "codec codec 9").
    public var description: String {
        switch self {
        case .none: "none"
        case .zlib: "zlib"
        case .zstd: "zstd"
        case .zstdPrefixed: "zstd-prefixed"
        default: "\(rawValue)"
        }
    }
}
