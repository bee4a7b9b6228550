/// The body of a LocalSend error answer, `{"message": "..."}` (every app version; some answers have no body).
public struct LocalSendErrorBody: Equatable, Sendable {
    /// The `message` text, at most `maxMessageBytes` (1024) UTF-8 bytes when read from a peer.
    public var message: String

    /// An error body carrying `message`.
    public init(message: String) {
        self.message = message
    }

    /// Reads a peer's error body; a message longer than `maxMessageBytes` is refused.
    public init(json body: ArraySlice<UInt8>) throws(HTTPError) {
        let bounds = BoundedJSONParser.Bounds(
            maxBytes: LocalSendLimits.maxErrorBodyBytes, maxEntries: 64,
            maxStringBytes: LocalSendLimits.maxErrorBodyBytes, maxValues: LocalSendLimits.maxDeviceValues)
        let root = try JSONObject.from(BoundedJSONParser.parse(body, bounds: bounds), path: "$")
        message = try root.string("message", in: "$", maxBytes: LocalSendLimits.maxMessageBytes)
    }

    /// The body to send, `{"message":"..."}`.
    public func encoded() -> [UInt8] {
        JSONValue.object(JSONObject([("message", .string(message))])).encoded()
    }
}
