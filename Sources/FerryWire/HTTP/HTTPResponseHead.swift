/// The status line and header fields of a response ferry's HTTPS server sends, and how its body is framed.
public struct HTTPResponseHead: Equatable, Sendable {
    /// How the body after the head is delimited; the encoder writes the matching field itself.
    public enum Framing: Equatable, Sendable {
        /// `Content-Length: n` (0 for an empty body).
        case contentLength(Int64)
        /// `Transfer-Encoding: chunked`: pieces from `HTTPResponseEncoder.chunk`, then `lastChunk`.
        case chunked
        /// No body and no length field: a 1xx or 204 status.
        case none
    }

    /// The status line's code and reason phrase.
    public var status: HTTPStatus
    /// Fields to send besides the framing field, which may not be among them (the encoder writes it).
    public var headers: HTTPHeaders
    /// How the body is delimited; the encoder writes `Content-Length` or `Transfer-Encoding` from it.
    public var framing: Framing

    /// A response head; by default an empty body (`Content-Length: 0`).
    public init(status: HTTPStatus, headers: HTTPHeaders = HTTPHeaders(), framing: Framing = .contentLength(0)) {
        self.status = status
        self.headers = headers
        self.framing = framing
    }
}
