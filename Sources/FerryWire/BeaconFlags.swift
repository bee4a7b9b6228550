/// The flag byte of a discovery beacon.
///
/// Unknown bits are kept in `rawValue` (and ignored) so newer peers can add flags.
///
/// | bit | flag | meaning |
/// | --- | --- | --- |
/// | 0 | query | "who is there? answer now": peers that hear it send their beacon without waiting |
/// | 1 | available | the sender advertises and accepts connections |
/// | 2 | leaving | the sender is going away: forget it now instead of waiting for it to expire |
public struct BeaconFlags: OptionSet, Hashable, Sendable {
    public let rawValue: UInt8

    public init(rawValue: UInt8) {
        self.rawValue = rawValue
    }

    public static let query = BeaconFlags(rawValue: 1 << 0)
    public static let available = BeaconFlags(rawValue: 1 << 1)
    public static let leaving = BeaconFlags(rawValue: 1 << 2)
}
