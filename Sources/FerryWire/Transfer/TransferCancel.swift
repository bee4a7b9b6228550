/// Ends a whole transfer early, from either side.
///
/// After it neither side sends more frames for the transfer; the receiver publishes nothing more of it and
/// keeps its staged data so a later offer can resume. Payload (kind 0x0106):
///
/// ```
/// +------------+--------+-----------------------+--------------------------+
/// | transferID | reason | detail str8 (0...255) | trailing bytes (ignored) |
/// | bytes[16]  | u8     | u8 length + UTF-8     |                          |
/// +------------+--------+-----------------------+--------------------------+
/// ```
public struct TransferCancel: Equatable, Sendable {
    /// The transfer cancelled.
    public var transferID: TransferID
    /// Why.
    public var reason: CancelReason
    /// Free text for a human, may be empty.
    public var detail: String

    /// A cancel of `transferID` for `reason`, with free text for a human.
    public init(transferID: TransferID, reason: CancelReason, detail: String = "") {
        self.transferID = transferID
        self.reason = reason
        self.detail = detail
    }

    /// Throws `invalidField` when the detail is longer than 255 UTF-8 bytes.
    public func validate() throws(WireError) {
        try StringField.validate(detail, "detail", lengths: StringField.detailLengths)
    }
}

extension TransferCancel {
    init(payload: ArraySlice<UInt8>) throws(WireError) {
        var reader = ByteReader(payload, context: "transferCancel")
        transferID = try reader.readTransferID("transferID")
        reason = CancelReason(rawValue: try reader.readUInt8("reason"))
        detail = try reader.readString8("detail", lengths: StringField.detailLengths)
        reader.skipRemaining()
    }

    func write(to writer: inout ByteWriter) {
        precondition((try? validate()) != nil, "TransferCancel.validate() must pass before encoding")
        writer.write(transferID)
        writer.write(reason.rawValue)
        writer.write(string8: detail)
    }
}
