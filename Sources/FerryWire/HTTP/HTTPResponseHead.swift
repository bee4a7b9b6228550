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

    public var status: HTTPStatus
    public var headers: HTTPHeaders
    public var framing: Framing

    public init(status: HTTPStatus, headers: HTTPHeaders = HTTPHeaders(), framing: Framing = .contentLength(0)) {
        self.status = status
        self.headers = headers
        self.framing = framing
    }
}
