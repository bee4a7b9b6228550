/// The flag byte of a discovery beacon.
///
/// Unknown bits are kept in `rawValue` (and ignored) so newer peers can add flags.
///
/// | bit | flag | meaning |
/// | --- | --- | --- |
/// | 0 | query | "who is there? answer now": peers that hear it send their beacon without waiting |
/// | 1 | available | the sender advertises and accepts connections |
/// | 2 | leaving | the sender is going away: forget it now instead of waiting for it to expire |
/// | 3 | filesOnly | the sender's application reads no messages (it only transfers files): chats leave it out |
public struct BeaconFlags: OptionSet, Hashable, Sendable {
    /// The flag byte as sent, unknown bits included.
    public let rawValue: UInt8

    /// Any byte: unknown bits are kept, so a newer peer's flags survive.
    public init(rawValue: UInt8) {
        self.rawValue = rawValue
    }

    /// "Who is there? Answer now": peers that hear it send their own beacon without waiting.
    public static let query = BeaconFlags(rawValue: 1 << 0)
    /// The sender advertises and accepts connections.
    public static let available = BeaconFlags(rawValue: 1 << 1)
    /// The sender is going away: forget it now instead of waiting for it to expire.
    public static let leaving = BeaconFlags(rawValue: 1 << 2)
    /// The sender's application reads no messages: it only transfers files (`ferry receive`), so a chat neither
    /// lists it nor asks it to connect. The same statement as the hello's `Capabilities.filesOnly`.
    public static let filesOnly = BeaconFlags(rawValue: 1 << 3)
}
