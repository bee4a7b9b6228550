/// The last frame a peer sends before closing a link on purpose.
///
/// Lets the other side tell a deliberate disconnect from a lost link. Payload (kind 0x0007):
///
/// ```
/// +--------+--------------------------+--------------------------+
/// | reason | detail str8 (0...255)    | trailing bytes (ignored) |
/// | u8     | u8 length + UTF-8        |                          |
/// +--------+--------------------------+--------------------------+
/// ```
public struct Goodbye: Equatable, Sendable {
    /// Why the sender closes the link.
    public var reason: GoodbyeReason
    /// Free text for a human, may be empty.
    public var detail: String

    /// A goodbye for `reason`, with free text for a human (at most 255 UTF-8 bytes, see `validate()`).
    public init(reason: GoodbyeReason, detail: String = "") {
        self.reason = reason
        self.detail = detail
    }

    /// A goodbye whose detail is cut, at a character boundary, to the 255 UTF-8 bytes the field holds: for texts
    /// built from error descriptions, whose length the caller does not control.
    public init(reason: GoodbyeReason, clipping detail: String) {
        self.init(reason: reason, detail: Limits.clippedDetail(detail))
    }

    /// Throws `invalidField` when the detail is longer than 255 UTF-8 bytes.
    public func validate() throws(WireError) {
        try StringField.validate(detail, "detail", lengths: StringField.detailLengths)
    }
}

extension Goodbye {
    init(payload: ArraySlice<UInt8>) throws(WireError) {
        var reader = ByteReader(payload, context: "goodbye")
        reason = GoodbyeReason(rawValue: try reader.readUInt8("reason"))
        detail = try reader.readString8("detail", lengths: StringField.detailLengths)
        reader.skipRemaining()
    }

    func write(to writer: inout ByteWriter) {
        precondition((try? validate()) != nil, "Goodbye.validate() must pass before encoding")
        writer.write(reason.rawValue)
        writer.write(string8: detail)
    }
}
