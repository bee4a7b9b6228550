import COpenSSL

/// What went wrong in the security layer: identity files, TLS handshakes, sealed datagrams.
///
/// One error type for the module. Peer misbehaviour (a bad preface, a failed handshake) closes the link with the
/// text of the error; environment failures (an unreadable key file) carry what to do.
public enum SecurityError: Error, Equatable, Sendable, CustomStringConvertible {
    /// The identity files could not be read, written or parsed; the text names the file and what to do.
    case identity(String)
    /// The peer's first 8 bytes are not a ferry preface, or name another major version.
    case badPreface(String)
    /// The TLS handshake failed; the text is OpenSSL's reason.
    case handshakeFailed(String)
    /// The stream ended before the TLS handshake finished.
    case closedDuringHandshake
    /// The peer closed the connection before sending a single byte of its preface. A ferry acceptor does this, and
    /// only this, when too many connections from the same address are waiting (docs/PROTOCOL.md 10.6): it is
    /// busy, and a later attempt may succeed.
    case closedBeforePreface
    /// The TLS connection failed after the handshake (a bad record, a forged MAC).
    case connectionFailed(String)
    /// An OpenSSL call that should not fail did (out of memory...).
    case openSSL(String)

    /// What failed, with OpenSSL's reason where it gave one.
    public var description: String {
        switch self {
        case .identity(let text): return text
        case .badPreface(let text): return "not a ferry peer: \(text)"
        case .handshakeFailed(let text): return "the TLS handshake failed: \(text)"
        case .closedDuringHandshake: return "the link closed during the TLS handshake"
        case .closedBeforePreface: return "the peer closed the connection before its preface"
        case .connectionFailed(let text): return "the TLS connection failed: \(text)"
        case .openSSL(let text): return "OpenSSL: \(text)"
        }
    }

    /// The reasons OpenSSL queued on this thread, oldest first, joined; the queue is emptied.
    static func drainOpenSSLErrors(fallback: String) -> String {
        var reasons: [String] = []
        while true {
            let code = ERR_get_error()
            if code == 0 { break }
            if let reason = ERR_reason_error_string(code) {
                reasons.append(String(cString: reason))
            } else {
                reasons.append("error \(code)")
            }
        }
        return reasons.isEmpty ? fallback : reasons.joined(separator: "; ")
    }
}
