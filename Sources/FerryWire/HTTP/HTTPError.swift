/// Everything that can be wrong with an HTTP request or a LocalSend JSON body from a peer, or with a response
/// about to be encoded; each case knows the status a server answers before it closes the connection.
///
/// Why a type of its own beside `WireError` (as `CompressionError` is): these errors end in an HTTP status sent
/// back to a foreign peer (400, 413, 414, 431, 501, 505), which none of ferry's own frame errors has, and the
/// LocalSend JSON arrives in HTTP bodies, so it shares the type. None is ever a trap; the decoder that threw is
/// finished (the stream cannot be resynchronised) and the driver answers `status`, then closes.
public enum HTTPError: Error, Equatable, Sendable, CustomStringConvertible {
    /// Structurally broken request bytes, e.g. "header line: bare CR", "chunk size: not hexadecimal".
    case malformed(String)
    /// The request line (mostly its target) exceeds its limit, or the target holds too many query parameters.
    case targetTooLong(limit: Int)
    /// The header section (or a trailer section) exceeds a bound: total bytes, number of fields or one line.
    case headersTooLarge(String)
    /// An HTTP version other than 1.0 and 1.1, e.g. "HTTP/2.0".
    case unsupportedVersion(String)
    /// A transfer coding other than `chunked`, e.g. "gzip".
    case notImplemented(String)
    /// An `Expect` header other than `100-continue`.
    case expectationFailed(String)
    /// A body above the limit of what it is for (a JSON body above its byte bound).
    case bodyTooLarge(length: Int, limit: Int)
    /// A JSON body with more entries than allowed, e.g. "files" above 10000; refused before it is allocated.
    case tooManyEntries(String, limit: Int)
    /// A JSON body that is not JSON, or whose fields have the wrong type or value, e.g. "files.a.size: negative".
    case invalidJSON(String)
    /// A value refused before it is encoded (not from a peer), e.g. "header value: contains CR or LF".
    case invalidField(String)

    /// The status a server answers when a peer's request fails with this error.
    public var status: HTTPStatus {
        switch self {
        case .malformed, .invalidJSON: .badRequest
        case .targetTooLong: .uriTooLong
        case .headersTooLarge: .headerFieldsTooLarge
        case .unsupportedVersion: .versionNotSupported
        case .notImplemented: .notImplemented
        case .expectationFailed: .expectationFailed
        case .bodyTooLarge, .tooManyEntries: .payloadTooLarge
        case .invalidField: .internalServerError
        }
    }

    /// What was wrong, for logs and error bodies (never holds more than the bytes' description).
    public var description: String {
        switch self {
        case .malformed(let what): "The peer sent a malformed HTTP request (\(what))."
        case .targetTooLong(let limit): "The request target exceeds the limit of \(limit) bytes or parameters."
        case .headersTooLarge(let what): "The request's header fields are too large (\(what))."
        case .unsupportedVersion(let version): "The peer speaks \(version); only HTTP/1.1 and HTTP/1.0 are served."
        case .notImplemented(let coding): "The transfer coding \(coding) is not supported (only chunked)."
        case .expectationFailed(let value): "The expectation \(value) cannot be met (only 100-continue)."
        case .bodyTooLarge(let length, let limit): "A body of \(length) bytes exceeds the limit of \(limit) bytes."
        case .tooManyEntries(let what, let limit): "Too many entries in \(what) (at most \(limit))."
        case .invalidJSON(let what): "The JSON body is invalid (\(what))."
        case .invalidField(let what): "A value cannot be encoded (\(what))."
        }
    }
}
