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
/// | 4 | files only: not a feature but a statement, that the sender's application reads no messages |
public struct Capabilities: OptionSet, Hashable, Sendable, CustomStringConvertible {
    /// The bit set as sent, unknown bits included.
    public let rawValue: UInt32

    /// Any bit set: unknown bits are kept, so a newer peer's capabilities survive a round trip.
    public init(rawValue: UInt32) {
        self.rawValue = rawValue
    }

    /// The peer can inflate and deflate zlib (chunks of the transfer protocol).
    public static let zlib = Capabilities(rawValue: 1 << 0)
    /// The peer can compress and decompress zstd.
    public static let zstd = Capabilities(rawValue: 1 << 1)
    /// The peer takes unreliable datagrams (sealed with keys of the link) on its `datagramPort`.
    public static let datagrams = Capabilities(rawValue: 1 << 2)
    /// The peer runs a transfer engine: it takes offers and the other transfer frames.
    public static let transfers = Capabilities(rawValue: 1 << 3)
    /// The sender's application reads no messages (`message` frames and datagrams): it only transfers files. Not
    /// a feature both sides must have, a statement about one side, as the beacon flag `BeaconFlags.filesOnly`:
    /// a chat does not count such a peer as one of its members.
    public static let filesOnly = Capabilities(rawValue: 1 << 4)
    /// Every capability this version defines.
    public static let known: Capabilities = [.zlib, .zstd, .datagrams, .transfers, .filesOnly]

    /// The names of the bits set (`[zlib, datagrams]`), unknown ones in hex.
    public var description: String {
        var names: [String] = []
        if contains(.zlib) { names.append("zlib") }
        if contains(.zstd) { names.append("zstd") }
        if contains(.datagrams) { names.append("datagrams") }
        if contains(.transfers) { names.append("transfers") }
        if contains(.filesOnly) { names.append("filesOnly") }
        let unknown = rawValue & ~Self.known.rawValue
        if unknown != 0 { names.append("0x\(Hex.string(UInt64(unknown), width: 8))") }
        return "[" + names.joined(separator: ", ") + "]"
    }
}
