/// The flags byte of an offer's folders section (PROTOCOL.md 11.3): an open set, so unknown bits are carried.
///
/// Bit 0 `replaces`: the offer's files are newer versions of files this sender offered before under the same names
/// (`ferry watch` re-sending a changed file). A receiver MAY then put each in place of the file it published from
/// this sender under that name; one that does not (or cannot tell the file is the one it published) publishes as for
/// any offer, under a numbered name. Other bits are reserved: sent as 0, carried on receipt.
public struct OfferFlags: OptionSet, Equatable, Sendable {
    public let rawValue: UInt8

    /// A flag set from its wire byte.
    public init(rawValue: UInt8) {
        self.rawValue = rawValue
    }

    /// The files replace earlier versions from the same sender (bit 0).
    public static let replaces = OfferFlags(rawValue: 1 << 0)
}
