/// The query parameters of LocalSend's requests: `pin` on prepare-upload (protocol 2.1 on), `sessionId`,
/// `fileId` and `token` on upload, `sessionId` on cancel (optional: v1 apps send none).
///
/// Read from an `HTTPTarget` (form-decoded: `+` is a space, invalid escapes refused), each at most
/// `maxIdentifierBytes`, a repeated name refused. The PIN travels in the query, so in every request line of a
/// prepare-upload: ferry never logs a target.
public struct LocalSendQuery: Equatable, Sendable {
    public var sessionID: String?
    public var fileID: String?
    public var token: String?
    public var pin: String?

    public init(sessionID: String? = nil, fileID: String? = nil, token: String? = nil, pin: String? = nil) {
        self.sessionID = sessionID
        self.fileID = fileID
        self.token = token
        self.pin = pin
    }

    public init(_ target: HTTPTarget) throws(HTTPError) {
        func read(_ name: String) throws(HTTPError) -> String? {
            guard let value = try target.value(for: name) else { return nil }
            guard value.utf8.count <= LocalSendLimits.maxIdentifierBytes else {
                throw .malformed("query: \(name) longer than \(LocalSendLimits.maxIdentifierBytes) bytes")
            }
            return value
        }
        sessionID = try read("sessionId")
        fileID = try read("fileId")
        token = try read("token")
        pin = try read("pin")
    }

    /// The three parameters an upload needs, or a 400 naming the missing one.
    public func upload() throws(HTTPError) -> (sessionID: String, fileID: String, token: String) {
        guard let sessionID else { throw .malformed("query: sessionId missing") }
        guard let fileID else { throw .malformed("query: fileId missing") }
        guard let token else { throw .malformed("query: token missing") }
        return (sessionID, fileID, token)
    }

    /// `?sessionId=...&fileId=...&token=...&pin=...` for the parameters set (form-encoded), or "" when none is.
    public var encoded: String {
        let pairs = [("sessionId", sessionID), ("fileId", fileID), ("token", token), ("pin", pin)]
            .compactMap { name, value in value.map { "\(name)=\(Self.formEncode($0))" } }
        return pairs.isEmpty ? "" : "?" + pairs.joined(separator: "&")
    }

    /// Unreserved bytes as they are, a space as `+`, every other byte as `%XX`.
    static func formEncode(_ text: String) -> String {
        var bytes: [UInt8] = []
        for byte in text.utf8 {
            switch byte {
            case UInt8(ascii: "a")...UInt8(ascii: "z"), UInt8(ascii: "A")...UInt8(ascii: "Z"),
                UInt8(ascii: "0")...UInt8(ascii: "9"), UInt8(ascii: "-"), UInt8(ascii: "."), UInt8(ascii: "_"),
                UInt8(ascii: "~"):
                bytes.append(byte)
            case UInt8(ascii: " "):
                bytes.append(UInt8(ascii: "+"))
            default:
                bytes += Array("%".utf8) + Array(Hex.string([byte]).uppercased().utf8)
            }
        }
        return String(decoding: bytes, as: UTF8.self)
    }
}
