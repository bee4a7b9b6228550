/// A peer's 64-bit identity within a run of the program (GameKit's peer ID string).
///
/// A distinct type rather than a bare `UInt64` so it cannot be mixed up with sequence numbers or ports.
/// Chosen at random per session start; stable device identity is `DeviceID`. Big-endian u64 on the wire.
public struct PeerID: RawRepresentable, Hashable, Sendable, Comparable, CustomStringConvertible {
    /// The ID as sent: a big-endian `u64`.
    public var rawValue: UInt64

    /// The ID `rawValue`.
    public init(rawValue: UInt64) {
        self.rawValue = rawValue
    }

    /// Parses 1 to 16 hex digits (either case), e.g. the `description` of a peer ID.
    public init?(hex: String) {
        let digits = Array(hex.utf8)
        guard (1...16).contains(digits.count) else { return nil }
        var value: UInt64 = 0
        for digit in digits {
            guard let nibble = Hex.value(of: digit) else { return nil }
            value = value << 4 | UInt64(nibble)
        }
        rawValue = value
    }

    /// The first ID of the range kept for peers of other protocols (LocalSend, a browser, magic-wormhole), which the
    /// transfer engine gives them when an adapter attaches one: a session picks its own ID below it, and a ferry peer
    /// claiming one in it has its link cut at its first transfer frame (PROTOCOL.md 8, `peerID`).
    public static let firstForeign: UInt64 = 0xFFFF_FFFF_0000_0000

    /// Whether this ID is in the range kept for peers of other protocols (`firstForeign` and up).
    public var isForeign: Bool { rawValue >= Self.firstForeign }

    /// 16 lowercase hex digits.
    public var description: String { Hex.string(rawValue, width: 16) }

    /// Orders IDs as unsigned numbers: of two peers, the lower one asks to connect (10.4).
    public static func < (lhs: PeerID, rhs: PeerID) -> Bool {
        lhs.rawValue < rhs.rawValue
    }
}
