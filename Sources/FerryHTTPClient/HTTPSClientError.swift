import FerrySecurity

/// Why a request to a LocalSend receiver failed; each case says what a person can check.
public enum HTTPSClientError: Error, Equatable, Sendable, CustomStringConvertible {
    /// Nobody accepted the connection (refused, unreachable, no route); the text is libcurl's.
    case refused(String)
    /// The server presented another certificate than the one pinned: the handshake failed before a request byte
    /// was written.
    case wrongCertificate(expected: LocalSendFingerprint, presented: LocalSendFingerprint)
    /// The TLS handshake failed for another reason (no common version or suite, our certificate refused...).
    case handshakeFailed(String)
    /// Connecting took longer than the connect timeout, nothing moved for the stall timeout, or the whole request
    /// took longer than its limit.
    case timedOut(String)
    /// The request's task was cancelled.
    case cancelled
    /// The response body was longer than the limit: not read further.
    case responseTooLarge(limit: Int)
    /// The server answered with a status outside 200-299; the body (bounded) as text.
    case status(Int, body: String)
    /// The file being uploaded could not be read, or ended before its announced length.
    case sourceFailed(String)
    /// Any other failure, with libcurl's text.
    case failed(String)

    /// What failed, for a person.
    public var description: String {
        switch self {
        case .refused(let text): return "could not connect: \(text)"
        case .wrongCertificate(let expected, let presented):
            return "the receiver presented certificate \(presented), not \(expected) as announced; nothing was sent"
        case .handshakeFailed(let text): return "the TLS handshake failed: \(text)"
        case .timedOut(let text): return "timed out: \(text)"
        case .cancelled: return "cancelled"
        case .responseTooLarge(let limit): return "the response was longer than \(limit) bytes"
        case .status(let code, let body): return body.isEmpty ? "HTTP status \(code)" : "HTTP status \(code): \(body)"
        case .sourceFailed(let text): return "could not read the file: \(text)"
        case .failed(let text): return text
        }
    }
}
