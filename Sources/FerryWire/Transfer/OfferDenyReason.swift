/// Why a receiver denied a whole offer (u8 on the wire, in `OfferReply`).
///
/// An open set, like `DenyReason`: a reason added by a newer peer is carried and shown as "unknown reason (N)"
/// rather than rejected. An accepting reply sends 0, which carries no meaning.
public struct OfferDenyReason: RawRepresentable, Hashable, Sendable, CustomStringConvertible {
    /// The reason as sent.
    public var rawValue: UInt8

    /// Any value: an unknown reason is carried and shown as "unknown reason (N)".
    public init(rawValue: UInt8) {
        self.rawValue = rawValue
    }

    /// The value an accepting reply sends.
    public static let unspecified = OfferDenyReason(rawValue: 0)
    /// The receiver's user (or policy) said no.
    public static let deniedByUser = OfferDenyReason(rawValue: 1)
    /// The receiver asked its user, and nobody answered in time.
    public static let noAnswer = OfferDenyReason(rawValue: 2)
    /// The receiver takes no files now.
    public static let notAccepting = OfferDenyReason(rawValue: 3)
    /// The files do not fit in the receiver's free space.
    public static let insufficientSpace = OfferDenyReason(rawValue: 4)
    /// The offer broke a rule the wire format cannot check, e.g. a refused file name.
    public static let invalidOffer = OfferDenyReason(rawValue: 5)
    /// The receiver has too many transfers going on; try again later.
    public static let busy = OfferDenyReason(rawValue: 6)
    /// The receiver would ask its user, but nobody is there to ask (no terminal): it accepts pinned peers only.
    public static let nobodyToAsk = OfferDenyReason(rawValue: 7)
    /// The receiver would ask its user, but this sender (or everyone) offered more than its prompt rate allows:
    /// denied without asking; a later offer may be asked about.
    public static let tooManyOffers = OfferDenyReason(rawValue: 8)

    /// The reason in words, written for the sending user.
    public var description: String {
        switch self {
        case .unspecified: "no reason"
        case .deniedByUser: "denied by the user"
        case .noAnswer: "nobody answered in time"
        case .notAccepting: "not accepting files"
        case .insufficientSpace: "not enough free disk space"
        case .invalidOffer: "the offer was invalid"
        case .busy: "the receiver is busy"
        case .nobodyToAsk: "nobody is there to answer, so only trusted peers are accepted"
        case .tooManyOffers: "too many offers; try again later"
        default: "unknown reason (\(rawValue))"
        }
    }
}
