/// The compression codecs a peer offers or accepts for a transfer (u8 bit set on the wire).
///
/// The sender lists what it can produce in its offer, the receiver what it will inflate in its reply; chunks
/// then use only codecs of the reply (or none, which needs no negotiation). Unknown bits are kept in
/// `rawValue` so a newer peer's set survives a round trip.
///
/// | bit | codec |
/// | --- | --- |
/// | 0 | zlib |
/// | 1 | zstd |
/// | 2 | zstdPrefixed (zstd with the file's previous chunk as prefix) |
public struct CodecSet: OptionSet, Hashable, Sendable, CustomStringConvertible {
    /// The bit set as sent, unknown bits included.
    public let rawValue: UInt8

    /// Any bit set: unknown bits are kept.
    public init(rawValue: UInt8) {
        self.rawValue = rawValue
    }

    /// zlib (raw deflate).
    public static let zlib = CodecSet(rawValue: 1 << 0)
    /// zstd.
    public static let zstd = CodecSet(rawValue: 1 << 1)
    /// zstd with the file's previous chunk as prefix (`Codec.zstdPrefixed`).
    public static let zstdPrefixed = CodecSet(rawValue: 1 << 2)
    /// Every codec this version defines.
    public static let known: CodecSet = [.zlib, .zstd, .zstdPrefixed]

    /// True when a chunk may use `codec` under this set: `.none` always, zlib, zstd and zstdPrefixed when their
    /// bit is set, an unknown codec never.
    public func contains(codec: Codec) -> Bool {
        switch codec {
        case .none: true
        case .zlib: contains(.zlib)
        case .zstd: contains(.zstd)
        case .zstdPrefixed: contains(.zstdPrefixed)
        default: false
        }
    }

    /// The names of the codecs in the set (`[zlib, zstd]`).
    public var description: String {
        var names: [String] = []
        if contains(.zlib) { names.append("zlib") }
        if contains(.zstd) { names.append("zstd") }
        if contains(.zstdPrefixed) { names.append("zstd-prefixed") }
        let unknown = rawValue & ~Self.known.rawValue
        if unknown != 0 { names.append("0x\(Hex.string(UInt64(unknown), width: 2))") }
        return "[" + names.joined(separator: ", ") + "]"
    }
}
