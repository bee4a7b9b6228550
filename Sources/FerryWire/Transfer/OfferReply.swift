/// The receiver's answer to an offer: accept it (file by file) or deny it as a whole.
///
/// Sent before any chunk: a sender sends nothing of a file the reply did not accept. An accepting reply has
/// one decision per offered file, in offer order (the engine checks the count against its offer); a denying
/// reply has none and says why. Payload (kind 0x0101):
///
/// ```
/// +------------+----------+--------+-----------------------+--------+-------+--------------------+
/// | transferID | accepted | reason | detail str8 (0...255) | codecs | count | count x decision   |
/// | bytes[16]  | u8 0/1   | u8     | u8 length + UTF-8     | u8     | u32   | see FileDecision   |
/// +------------+----------+--------+-----------------------+--------+-------+--------------------+
/// | flags (optional) | trailing bytes (ignored) |
/// | u8               |                          |
/// +------------------+--------------------------+
/// ```
///
/// `count` is at most 10 000, checked before anything is reserved, and 0 when `accepted` is 0. `flags` is sent
/// only when one is set (absent means 0), bit 0 `relay`: the receiver takes part in the offer's swarm. Other
/// bits are carried as received, never interpreted.
public struct OfferReply: Equatable, Sendable {
    /// The offer answered.
    public var transferID: TransferID
    /// Whether any of the offer is accepted; false denies the whole offer.
    public var accepted: Bool
    /// Why the offer was denied; `.unspecified` (0) in an accepting reply.
    public var reason: OfferDenyReason
    /// Free text for a human, may be empty.
    public var detail: String
    /// Codecs the receiver inflates; chunks use only these (or none).
    public var codecs: CodecSet
    /// One decision per offered file, in the offer's order (empty when denied).
    public var files: [FileDecision]
    /// The flags byte as received (0 when absent); bits other than `relayFlag` are preserved, not interpreted.
    public var flags: UInt8

    /// The receiver takes part in the offer's swarm: it fetches chunks from other members and serves them the
    /// chunks it verified (flags bit 0; PROTOCOL.md 11.11). Only meaningful in reply to an offer with a swarm.
    public var relay: Bool {
        get { flags & Self.relayFlag != 0 }
        set { flags = newValue ? flags | Self.relayFlag : flags & ~Self.relayFlag }
    }

    static let relayFlag: UInt8 = 0x01

    /// A reply with the given fields; see `accepting` and `denying` for the usual ones.
    public init(
        transferID: TransferID, accepted: Bool, reason: OfferDenyReason = .unspecified, detail: String = "",
        codecs: CodecSet, files: [FileDecision], relay: Bool = false
    ) {
        self.transferID = transferID
        self.accepted = accepted
        self.reason = reason
        self.detail = detail
        self.codecs = codecs
        self.files = files
        self.flags = relay ? Self.relayFlag : 0
    }

    /// An accepting reply with one decision per offered file (with `relay`, taking part in the offer's swarm).
    public static func accepting(
        _ transferID: TransferID, codecs: CodecSet, files: [FileDecision], detail: String = "", relay: Bool = false
    ) -> OfferReply {
        OfferReply(transferID: transferID, accepted: true, detail: detail, codecs: codecs, files: files, relay: relay)
    }

    /// A reply that denies the whole offer.
    public static func denying(_ transferID: TransferID, reason: OfferDenyReason, detail: String = "") -> OfferReply {
        OfferReply(transferID: transferID, accepted: false, reason: reason, detail: detail, codecs: [], files: [])
    }

    /// Throws `invalidField` when the detail is longer than 255 UTF-8 bytes, there are more than 10 000
    /// decisions, or a denying reply carries decisions.
    public func validate() throws(WireError) {
        try StringField.validate(detail, "detail", lengths: StringField.detailLengths)
        try Self.checkCount(files.count, accepted: accepted)
    }

    static func checkCount(_ count: Int, accepted: Bool) throws(WireError) {
        guard count <= Limits.maxOfferFiles else {
            throw .invalidField("count: \(count), not in 0...\(Limits.maxOfferFiles)")
        }
        guard accepted || count == 0 else {
            throw .invalidField("count: \(count) decisions in a denying reply")
        }
    }
}

extension OfferReply {
    init(payload: ArraySlice<UInt8>) throws(WireError) {
        var reader = ByteReader(payload, context: "offerReply")
        transferID = try reader.readTransferID("transferID")
        accepted = try reader.readFlag("accepted")
        reason = OfferDenyReason(rawValue: try reader.readUInt8("reason"))
        detail = try reader.readString8("detail", lengths: StringField.detailLengths)
        codecs = CodecSet(rawValue: try reader.readUInt8("codecs"))
        let count = try reader.readCount("count", counts: 0...Limits.maxOfferFiles)
        try Self.checkCount(count, accepted: accepted)
        var files: [FileDecision] = []
        files.reserveCapacity(reader.boundedCapacity(count: count, minimumElementLength: FileDecision.encodedLength))
        for _ in 0..<count {
            files.append(try FileDecision(from: &reader))
        }
        self.files = files
        flags = reader.remainingCount > 0 ? try reader.readUInt8("flags") : 0
        reader.skipRemaining()
    }

    func write(to writer: inout ByteWriter) {
        precondition((try? validate()) != nil, "OfferReply.validate() must pass before encoding")
        writer.write(transferID)
        writer.write(flag: accepted)
        writer.write(reason.rawValue)
        writer.write(string8: detail)
        writer.write(codecs.rawValue)
        writer.write(UInt32(files.count))
        for file in files {
            file.write(to: &writer)
        }
        if flags != 0 { writer.write(flags) }
    }
}
