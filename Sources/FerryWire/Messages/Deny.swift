/// The answer to a connection request that refuses it; the link is closed after it.
///
/// Payload (kind 0x0004):
///
/// ```
/// +--------+--------------------------+--------------------------+
/// | reason | detail str8 (0...255)    | trailing bytes (ignored) |
/// | u8     | u8 length + UTF-8        |                          |
/// +--------+--------------------------+--------------------------+
/// ```
public struct Deny: Equatable, Sendable {
    /// Why the connection was denied.
    public var reason: DenyReason
    /// Free text for a human, may be empty.
    public var detail: String

    /// A denial for `reason`, with free text for a human.
    public init(reason: DenyReason, detail: String = "") {
        self.reason = reason
        self.detail = detail
    }

    /// Throws `invalidField` when the detail is longer than 255 UTF-8 bytes.
    public func validate() throws(WireError) {
        try StringField.validate(detail, "detail", lengths: StringField.detailLengths)
    }
}

extension Deny {
    init(payload: ArraySlice<UInt8>) throws(WireError) {
        var reader = ByteReader(payload, context: "deny")
        reason = DenyReason(rawValue: try reader.readUInt8("reason"))
        detail = try reader.readString8("detail", lengths: StringField.detailLengths)
        reader.skipRemaining()
    }

    func write(to writer: inout ByteWriter) {
        precondition((try? validate()) != nil, "Deny.validate() must pass before encoding")
        writer.write(reason.rawValue)
        writer.write(string8: detail)
    }
}
