/// An HTTP status code with its reason phrase, as a response's status line carries it.
///
/// An open set (a struct with static members, like `FrameKind`): a server may answer any code, and the reason
/// phrase is only for people reading a trace. The statuses ferry's HTTPS server answers are named here.
public struct HTTPStatus: Hashable, Sendable, CustomStringConvertible {
    public var code: Int
    public var reason: String

    public init(code: Int, reason: String) {
        self.code = code
        self.reason = reason
    }

    public static let continue100 = HTTPStatus(code: 100, reason: "Continue")
    public static let ok = HTTPStatus(code: 200, reason: "OK")
    public static let noContent = HTTPStatus(code: 204, reason: "No Content")
    public static let badRequest = HTTPStatus(code: 400, reason: "Bad Request")
    public static let unauthorized = HTTPStatus(code: 401, reason: "Unauthorized")
    public static let forbidden = HTTPStatus(code: 403, reason: "Forbidden")
    public static let notFound = HTTPStatus(code: 404, reason: "Not Found")
    public static let methodNotAllowed = HTTPStatus(code: 405, reason: "Method Not Allowed")
    public static let conflict = HTTPStatus(code: 409, reason: "Conflict")
    public static let payloadTooLarge = HTTPStatus(code: 413, reason: "Content Too Large")
    public static let uriTooLong = HTTPStatus(code: 414, reason: "URI Too Long")
    public static let expectationFailed = HTTPStatus(code: 417, reason: "Expectation Failed")
    public static let tooManyRequests = HTTPStatus(code: 429, reason: "Too Many Requests")
    public static let headerFieldsTooLarge = HTTPStatus(code: 431, reason: "Request Header Fields Too Large")
    public static let internalServerError = HTTPStatus(code: 500, reason: "Internal Server Error")
    public static let notImplemented = HTTPStatus(code: 501, reason: "Not Implemented")
    public static let versionNotSupported = HTTPStatus(code: 505, reason: "HTTP Version Not Supported")

    public var description: String { "\(code) \(reason)" }
}
