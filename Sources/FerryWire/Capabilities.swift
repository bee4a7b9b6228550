/// Optional features a peer supports, announced in its hello (u32 bit set, big-endian).
///
/// Unknown bits are kept in `rawValue` so a newer peer's flags survive a round trip; a feature is used on a
/// link only when both hellos have its bit.
///
/// | bit | feature |
/// | --- | --- |
/// | 0 | zlib compression |
/// | 1 | zstd compression |
/// | 2 | unreliable datagrams |
/// | 3 | file transfers (frame kinds 0x0100-0x01FF) |
public struct Capabilities: OptionSet, Hashable, Sendable, CustomStringConvertible {
    public let rawValue: UInt32

    public init(rawValue: UInt32) {
        self.rawValue = rawValue
    }

    public static let zlib = Capabilities(rawValue: 1 << 0)
    public static let zstd = Capabilities(rawValue: 1 << 1)
    public static let datagrams = Capabilities(rawValue: 1 << 2)
    /// The peer runs a transfer engine: it takes offers and the other transfer frames.
    public static let transfers = Capabilities(rawValue: 1 << 3)
    /// Every capability this version defines.
    public static let known: Capabilities = [.zlib, .zstd, .datagrams, .transfers]

    public var description: String {
        var names: [String] = []
        if contains(.zlib) { names.append("zlib") }
        if contains(.zstd) { names.append("zstd") }
        if contains(.datagrams) { names.append("datagrams") }
        if contains(.transfers) { names.append("transfers") }
        let unknown = rawValue & ~Self.known.rawValue
        if unknown != 0 { names.append("0x\(Hex.string(UInt64(unknown), width: 8))") }
        return "[" + names.joined(separator: ", ") + "]"
    }
}
