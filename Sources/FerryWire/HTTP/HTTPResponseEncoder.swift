/// Writes HTTP/1.1 responses: a status line, header fields and the framing field, then a body as the caller
/// sends it (whole after a `Content-Length`, or as chunks).
///
/// No header injection is possible: a field name must be a token and a value may hold no CR, LF, NUL or other
/// control byte (tab aside), the reason phrase likewise, so a value taken from a peer (a file name in a
/// `Content-Disposition`, say) can never start a field or a response of its own; such a value throws
/// `invalidField` before a byte is written. Framing fields (`Content-Length`, `Transfer-Encoding`) come only
/// from `HTTPResponseHead.framing`, never from `headers`, so a response cannot announce two lengths.
public enum HTTPResponseEncoder {
    /// The head's bytes, ending with the empty line.
    public static func encode(_ head: HTTPResponseHead) throws(HTTPError) -> [UInt8] {
        guard (100...999).contains(head.status.code) else { throw .invalidField("status: \(head.status.code)") }
        guard head.status.reason.utf8.allSatisfy(HTTPSyntax.isFieldValueCharacter) else {
            throw .invalidField("reason phrase: contains a control byte")
        }
        var bytes = Array("HTTP/1.1 \(head.status.code) \(head.status.reason)\r\n".utf8)
        for (name, value) in head.headers {
            guard HTTPSyntax.isToken(name.utf8) else { throw .invalidField("header name: not a token") }
            guard !HTTPHeaders.equalIgnoringCase(name, "Content-Length"),
                !HTTPHeaders.equalIgnoringCase(name, "Transfer-Encoding")
            else { throw .invalidField("header \(name): framing comes from the head's framing") }
            guard value.utf8.allSatisfy(HTTPSyntax.isFieldValueCharacter) else {
                throw .invalidField("header \(name): value contains CR, LF or another control byte")
            }
            bytes += Array("\(name): \(value)\r\n".utf8)
        }
        switch head.framing {
        case .contentLength(let length):
            guard length >= 0 else { throw .invalidField("Content-Length: negative") }
            bytes += Array("Content-Length: \(length)\r\n".utf8)
        case .chunked:
            bytes += Array("Transfer-Encoding: chunked\r\n".utf8)
        case .none:
            break
        }
        bytes += [HTTPSyntax.cr, HTTPSyntax.lf]
        return bytes
    }

    /// One chunk of a chunked body: its hex size line, the bytes and CRLF. An empty piece writes nothing (a
    /// zero-size chunk would end the body).
    public static func chunk(_ piece: ArraySlice<UInt8>) -> [UInt8] {
        guard !piece.isEmpty else { return [] }
        var bytes = Array(String(piece.count, radix: 16).utf8) + [HTTPSyntax.cr, HTTPSyntax.lf]
        bytes += piece
        bytes += [HTTPSyntax.cr, HTTPSyntax.lf]
        return bytes
    }

    /// The end of a chunked body: a zero-size chunk and no trailers.
    public static let lastChunk: [UInt8] = Array("0\r\n\r\n".utf8)
}
