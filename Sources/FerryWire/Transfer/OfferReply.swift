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
/// | trailing bytes (ignored) |
/// +--------------------------+
/// ```
///
/// `count` is at most 10 000, checked before anything is reserved, and 0 when `accepted` is 0.
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

    /// A reply with the given fields; see `accepting` and `denying` for the usual ones.
    public init(
        transferID: TransferID, accepted: Bool, reason: OfferDenyReason = .unspecified, detail: String = "",
        codecs: CodecSet, files: [FileDecision]
    ) {
        self.transferID = transferID
        self.accepted = accepted
        self.reason = reason
        self.detail = detail
        self.codecs = codecs
        self.files = files
    }

    /// An accepting reply with one decision per offered file.
    public static func accepting(
        _ transferID: TransferID, codecs: CodecSet, files: [FileDecision], detail: String = ""
    ) -> OfferReply {
        OfferReply(transferID: transferID, accepted: true, detail: detail, codecs: codecs, files: files)
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
    }
}
