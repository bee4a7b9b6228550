/// An HTTP status code with its reason phrase, as a response's status line carries it.
///
/// An open set (a struct with static members, like `FrameKind`): a server may answer any code, and the reason
/// phrase is only for people reading a trace. The statuses ferry's HTTPS server answers are named here.
public struct HTTPStatus: Hashable, Sendable, CustomStringConvertible {
    /// The status line's code, three digits: 100...999 (`HTTPResponseEncoder` refuses others).
    public var code: Int
    /// The reason phrase after the code; no control byte but tab (the encoder refuses one).
    public var reason: String

    /// A status with `code` and `reason` as given (checked when encoded).
    public init(code: Int, reason: String) {
        self.code = code
        self.reason = reason
    }

    /// 100 Continue: the client that sent `Expect: 100-continue` may send its body.
    public static let continue100 = HTTPStatus(code: 100, reason: "Continue")
    /// 200 OK.
    public static let ok = HTTPStatus(code: 200, reason: "OK")
    /// 204 No Content: success without a body.
    public static let noContent = HTTPStatus(code: 204, reason: "No Content")
    /// 400 Bad Request: malformed request bytes or an invalid JSON body.
    public static let badRequest = HTTPStatus(code: 400, reason: "Bad Request")
    /// 401 Unauthorized.
    public static let unauthorized = HTTPStatus(code: 401, reason: "Unauthorized")
    /// 403 Forbidden.
    public static let forbidden = HTTPStatus(code: 403, reason: "Forbidden")
    /// 404 Not Found.
    public static let notFound = HTTPStatus(code: 404, reason: "Not Found")
    /// 405 Method Not Allowed.
    public static let methodNotAllowed = HTTPStatus(code: 405, reason: "Method Not Allowed")
    /// 409 Conflict.
    public static let conflict = HTTPStatus(code: 409, reason: "Conflict")
    /// 413, RFC 9110's "Content Too Large" (formerly Payload Too Large): a body or an entry count over its bound.
    public static let payloadTooLarge = HTTPStatus(code: 413, reason: "Content Too Large")
    /// 414 URI Too Long: a request line over `maxRequestLineLength`.
    public static let uriTooLong = HTTPStatus(code: 414, reason: "URI Too Long")
    /// 417 Expectation Failed: an `Expect` other than `100-continue`.
    public static let expectationFailed = HTTPStatus(code: 417, reason: "Expectation Failed")
    /// 429 Too Many Requests.
    public static let tooManyRequests = HTTPStatus(code: 429, reason: "Too Many Requests")
    /// 431 Request Header Fields Too Large: a head, field line, field count or trailer over its bound.
    public static let headerFieldsTooLarge = HTTPStatus(code: 431, reason: "Request Header Fields Too Large")
    /// 500 Internal Server Error; also the status of `HTTPError.invalidField` (a response the encoder refused).
    public static let internalServerError = HTTPStatus(code: 500, reason: "Internal Server Error")
    /// 501 Not Implemented: a transfer coding other than chunked.
    public static let notImplemented = HTTPStatus(code: 501, reason: "Not Implemented")
    /// 505 HTTP Version Not Supported: anything but HTTP/1.0 and HTTP/1.1.
    public static let versionNotSupported = HTTPStatus(code: 505, reason: "HTTP Version Not Supported")

    /// The code and reason as on the status line, e.g. `404 Not Found`.
    public var description: String { "\(code) \(reason)" }
}
