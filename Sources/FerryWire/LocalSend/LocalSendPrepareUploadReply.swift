/// The 200 answer to a prepare-upload: the session's ID and a token for each accepted file (files left out
/// were declined), `{"sessionId": "...", "files": {"<fileId>": "<token>"}}`.
public struct LocalSendPrepareUploadReply: Equatable, Sendable {
    /// The session's ID (`sessionId`), at most `maxIdentifierBytes` (256).
    public var sessionID: String
    /// File id and its token, in order.
    public var tokens: [(fileID: String, token: String)]

    /// A reply for session `sessionID` with a token per accepted file.
    public init(sessionID: String, tokens: [(fileID: String, token: String)]) {
        self.sessionID = sessionID
        self.tokens = tokens
    }

    /// Decodes a peer's reply (at most `maxPrepareUploadBytes`, `maxFiles` tokens, each string `maxIdentifierBytes`).
    public init(json body: ArraySlice<UInt8>) throws(HTTPError) {
        let bounds = BoundedJSONParser.Bounds(
            maxBytes: LocalSendLimits.maxPrepareUploadBytes, maxEntries: LocalSendLimits.maxFiles,
            maxStringBytes: LocalSendLimits.maxIdentifierBytes, maxValues: LocalSendLimits.maxPrepareUploadValues)
        let root = try JSONObject.from(BoundedJSONParser.parse(body, bounds: bounds), path: "$")
        let identifier = LocalSendLimits.maxIdentifierBytes
        sessionID = try root.string("sessionId", in: "$", maxBytes: identifier)
        guard let files = try root.optionalObject("files", in: "$") else { throw .invalidJSON("$.files: missing") }
        tokens = []
        for (key, value) in files.members {
            guard case .string(let token) = value, token.utf8.count <= identifier else {
                throw .invalidJSON("$.files.\(key.prefix(64)): expected a token string")
            }
            tokens.append((key, token))
        }
    }

    /// The body to send, `{"sessionId":"...","files":{"<fileId>":"<token>",...}}`, tokens in order.
    public func encoded() -> [UInt8] {
        var root = JSONObject()
        root.add("sessionId", .string(sessionID))
        root.add("files", .object(JSONObject(tokens.map { ($0.fileID, .string($0.token)) })))
        return JSONValue.object(root).encoded()
    }

    /// Same session ID and the same (file ID, token) pairs in the same order.
    public static func == (lhs: Self, rhs: Self) -> Bool {
        lhs.sessionID == rhs.sessionID && lhs.tokens.count == rhs.tokens.count
            && zip(lhs.tokens, rhs.tokens).allSatisfy { $0.fileID == $1.fileID && $0.token == $1.token }
    }
}
