/// Which datagram sequence numbers a receiver has already taken, so a replayed datagram is dropped.
///
/// A sliding window of the last 64 numbers below the highest seen (as IPsec's anti-replay window, RFC 4303
/// section 3.4.3): a number above the highest moves the window; one inside it is fresh unless its bit is set;
/// one below it is too old to tell and is dropped. Datagrams may arrive out of order by up to 63 places.
/// Sequence 0 is never sent, so it is never fresh. Check with `isFresh` before authenticating and `record` only
/// after the datagram authenticated, so that forged numbers cannot move the window.
public struct ReplayWindow: Equatable, Sendable {
    /// How many numbers below the highest are remembered.
    public static let width: UInt64 = 64

    /// The highest number recorded (0: none yet).
    public private(set) var highest: UInt64 = 0
    /// Bit i set: `highest - i` was recorded.
    private var seen: UInt64 = 0

    /// An empty window: every number above 0 is fresh.
    public init() {}

    /// Whether `sequence` was not recorded yet and is not too old to tell.
    public func isFresh(_ sequence: UInt64) -> Bool {
        guard sequence != 0 else { return false }
        if sequence > highest { return true }
        let age = highest - sequence
        guard age < Self.width else { return false }
        return seen & (1 << age) == 0
    }

    /// Records an authenticated `sequence`. Precondition-free: recording a stale number changes nothing.
    public mutating func record(_ sequence: UInt64) {
        guard sequence != 0 else { return }
        if sequence > highest {
            let shift = sequence - highest
            seen = shift >= Self.width ? 0 : seen << shift
            seen |= 1
            highest = sequence
        } else {
            let age = highest - sequence
            if age < Self.width { seen |= 1 << age }
        }
    }
}
