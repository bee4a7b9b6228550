/// The 16-bit type of a frame on a reliable link.
///
/// An open set (a struct, not an enum) so an unknown kind can be carried, logged and skipped. The high bit
/// says what a peer that does not know the kind must do: set (0x8000) = ignorable, skip the frame; clear =
/// critical, close the link. Session kinds are 0x0001-0x00FF; 0x0100-0x01FF is reserved for file transfer.
public struct FrameKind: RawRepresentable, Hashable, Sendable, CustomStringConvertible {
    /// The kind as sent: a big-endian `u16` in the frame header.
    public var rawValue: UInt16

    /// Any value, known or not: an unknown kind is carried so that it can be skipped or refused by its bit.
    public init(rawValue: UInt16) {
        self.rawValue = rawValue
    }

    /// The kind `rawValue` (`FrameKind(0x0005)`).
    public init(_ rawValue: UInt16) {
        self.rawValue = rawValue
    }

    /// Bit 15: an unknown frame of this kind may be skipped.
    public static let ignorableBit: UInt16 = 0x8000

    /// True when a receiver that does not know this kind skips the frame instead of closing the link.
    public var isIgnorable: Bool { rawValue & Self.ignorableBit != 0 }

    /// `hello` (4.1): who is at this end and what it can do; the first frame each side sends.
    public static let hello = FrameKind(0x0001)
    /// `connectionRequest` (4.2): the initiator asks to be accepted.
    public static let connectionRequest = FrameKind(0x0002)
    /// `accept` (4.3): the acceptor takes the connection.
    public static let accept = FrameKind(0x0003)
    /// `deny` (4.4): the acceptor refuses the connection, with a reason.
    public static let deny = FrameKind(0x0004)
    /// `message` (4.5): an application message on a connected link, opaque bytes.
    public static let message = FrameKind(0x0005)
    /// `heartbeat` (4.6): liveness on an idle link.
    public static let heartbeat = FrameKind(0x0006)
    /// `goodbye` (4.7): the sender ends the link, with a reason.
    public static let goodbye = FrameKind(0x0007)
    /// `pairing` (4.8): a pairing nonce: the initiator's, after the acceptor's commitment; then the acceptor's, revealed
    /// before its answer (an `accept` that comes without it fails the pairing).
    public static let pairing = FrameKind(0x0008)

    /// Kinds reserved for the transfer protocol (`TransferMessage`); the session passes them through whole.
    public static let transferKinds: ClosedRange<UInt16> = 0x0100...0x01FF

    /// The kinds a 1.0 session understands.
    public static let sessionKinds: [FrameKind] = [
        .hello, .connectionRequest, .accept, .deny, .message, .heartbeat, .goodbye, .pairing,
    ]

    /// The kind's name (`hello`), or its hex value when unknown.
    public var description: String {
        switch self {
        case .hello: "hello"
        case .connectionRequest: "connectionRequest"
        case .accept: "accept"
        case .deny: "deny"
        case .message: "message"
        case .heartbeat: "heartbeat"
        case .goodbye: "goodbye"
        case .pairing: "pairing"
        default: "kind 0x\(Hex.string(UInt64(rawValue), width: 4))"
        }
    }
}
