/// What `HTTPRequestDecoder.next()` returns for one request: its head, then its body in pieces as they arrive,
/// then its end; the next request's head may follow (pipelining).
public enum HTTPRequestPart: Equatable, Sendable {
    case head(HTTPRequestHead)
    /// Body bytes (chunk framing removed), at most what was appended since the last piece.
    case body([UInt8])
    /// The body ended (at once after the head when there is none).
    case end
}
