/// The request line and header fields of one HTTP/1.x request, with what they mean for the connection.
///
/// The decoder fills the derived fields from the headers once, after checking them (a `Content-Length` that
/// disagrees with itself, one beside `Transfer-Encoding`, an unknown coding or expectation are errors, never a
/// guess): the driver reads `framing`, `keepAlive` and `expectsContinue`, not the raw headers.
public struct HTTPRequestHead: Equatable, Sendable {
    /// How the request's body is delimited.
    public enum Framing: Equatable, Sendable {
        /// No body: neither `Content-Length` nor `Transfer-Encoding` was sent.
        case none
        /// Exactly this many bytes follow the head.
        case contentLength(Int64)
        /// `Transfer-Encoding: chunked`: pieces with a hex size each, then a zero-size chunk and trailers.
        case chunked
    }

    /// The method as sent (a token; case-sensitive, so `get` is not `GET`).
    public var method: String
    /// The request target as sent, origin-form (`/path?query`); `HTTPTarget` splits and decodes it.
    public var target: String
    /// 1.0 or 1.1 (minor version).
    public var minorVersion: Int
    public var headers: HTTPHeaders
    public var framing: Framing
    /// Whether the connection stays open after this request: HTTP/1.1 unless `Connection: close`, HTTP/1.0 only
    /// with `Connection: keep-alive`.
    public var keepAlive: Bool
    /// `Expect: 100-continue`: the client waits (a while) for `100 Continue` or a final status before the body.
    public var expectsContinue: Bool

    public init(
        method: String, target: String, minorVersion: Int = 1, headers: HTTPHeaders = HTTPHeaders(),
        framing: Framing = .none, keepAlive: Bool = true, expectsContinue: Bool = false
    ) {
        self.method = method
        self.target = target
        self.minorVersion = minorVersion
        self.headers = headers
        self.framing = framing
        self.keepAlive = keepAlive
        self.expectsContinue = expectsContinue
    }
}
