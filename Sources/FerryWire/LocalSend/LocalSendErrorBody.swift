/// The body of a LocalSend error answer, `{"message": "..."}` (every app version; some answers have no body).
public struct LocalSendErrorBody: Equatable, Sendable {
    public var message: String

    public init(message: String) {
        self.message = message
    }

    /// Reads a peer's error body; a message longer than `maxMessageBytes` is refused.
    public init(json body: ArraySlice<UInt8>) throws(HTTPError) {
        let bounds = BoundedJSONParser.Bounds(
            maxBytes: LocalSendLimits.maxErrorBodyBytes, maxEntries: 64,
            maxStringBytes: LocalSendLimits.maxErrorBodyBytes)
        let root = try JSONObject.from(BoundedJSONParser.parse(body, bounds: bounds), path: "$")
        message = try root.string("message", in: "$", maxBytes: LocalSendLimits.maxMessageBytes)
    }

    public func encoded() -> [UInt8] {
        JSONValue.object(JSONObject([("message", .string(message))])).encoded()
    }
}
