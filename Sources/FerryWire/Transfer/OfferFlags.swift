/// The flags byte of an offer's folders section (PROTOCOL.md 11.3): an open set, so unknown bits are carried.
///
/// Bit 0 `replaces`: the offer's files are versions of files this sender keeps up to date (`ferry watch`): each may
/// take the place of the file this same sender delivered under that name before (PROTOCOL.md 11.10 rule 11). A
/// receiver MAY then put it in place of that file, if it is still the file delivered; one that does not (or cannot
/// tell) publishes as for any offer, under a numbered name. Other bits are reserved: sent as 0, carried on receipt.
public struct OfferFlags: OptionSet, Equatable, Sendable {
    /// The flags byte as sent.
    public let rawValue: UInt8

    /// A flag set from its wire byte.
    public init(rawValue: UInt8) {
        self.rawValue = rawValue
    }

    /// The files may replace the versions the same sender delivered before (bit 0).
    public static let replaces = OfferFlags(rawValue: 1 << 0)
}
