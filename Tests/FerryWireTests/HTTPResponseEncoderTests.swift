import Testing

@testable import FerryWire

@Suite("HTTPResponseEncoder")
struct HTTPResponseEncoderTests {
    @Test func aJSONAnswerHasItsStatusLineFieldsAndLength() throws {
        let body = LocalSendErrorBody(message: "PIN required").encoded()
        let head = HTTPResponseHead(
            status: .unauthorized, headers: HTTPHeaders([("Content-Type", "application/json")]),
            framing: .contentLength(Int64(body.count)))
        let text = String(decoding: try HTTPResponseEncoder.encode(head) + body, as: UTF8.self)
        #expect(
            text == "HTTP/1.1 401 Unauthorized\r\nContent-Type: application/json\r\nContent-Length: 26\r\n\r\n"
                + #"{"message":"PIN required"}"#)
    }

    @Test func aChunkedAnswerFramesEachPieceAndEnds() throws {
        let head = try HTTPResponseEncoder.encode(HTTPResponseHead(status: .ok, framing: .chunked))
        #expect(String(decoding: head, as: UTF8.self) == "HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n")
        let body = HTTPResponseEncoder.chunk(Array(repeating: 0x41, count: 26)[...]) + HTTPResponseEncoder.chunk([])
        #expect(
            String(decoding: body + HTTPResponseEncoder.lastChunk, as: UTF8.self) == "1a\r\n"
                + String(repeating: "A", count: 26) + "\r\n0\r\n\r\n")
        let interim = try HTTPResponseEncoder.encode(HTTPResponseHead(status: .continue100, framing: .none))
        #expect(String(decoding: interim, as: UTF8.self) == "HTTP/1.1 100 Continue\r\n\r\n")
    }

    @Test(arguments: ["a\r\nSet-Cookie: x", "a\nb", "a\rb", "a\u{0}b", "a\u{7F}b"])
    func aValueThatCouldInjectAFieldIsRefused(_ value: String) {
        let head = HTTPResponseHead(status: .ok, headers: HTTPHeaders([("Content-Disposition", value)]))
        #expect(
            throws: HTTPError.invalidField("header Content-Disposition: value contains CR, LF or another control byte")
        ) {
            try HTTPResponseEncoder.encode(head)
        }
    }

    @Test func namesReasonsAndFramingFieldsAreChecked() {
        #expect(throws: HTTPError.invalidField("header name: not a token")) {
            try HTTPResponseEncoder.encode(HTTPResponseHead(status: .ok, headers: HTTPHeaders([("X Y", "1")])))
        }
        #expect(throws: HTTPError.invalidField("reason phrase: contains a control byte")) {
            try HTTPResponseEncoder.encode(HTTPResponseHead(status: HTTPStatus(code: 200, reason: "OK\r\nX: y")))
        }
        #expect(throws: HTTPError.invalidField("header content-length: framing comes from the head's framing")) {
            try HTTPResponseEncoder.encode(
                HTTPResponseHead(status: .ok, headers: HTTPHeaders([("content-length", "1")])))
        }
    }

    @Test func eachDecodeErrorMapsToTheStatusAServerAnswers() {
        #expect(HTTPError.malformed("x").status == .badRequest)
        #expect(HTTPError.bodyTooLarge(length: 2, limit: 1).status.code == 413)
        #expect(HTTPError.tooManyEntries("$.files", limit: 1).status.code == 413)
        #expect(HTTPError.targetTooLong(limit: 1).status.code == 414)
        #expect(HTTPError.headersTooLarge("x").status.code == 431)
        #expect(HTTPError.notImplemented("gzip").status.code == 501)
        #expect(HTTPError.unsupportedVersion("HTTP/2.0").status.code == 505)
        #expect(HTTPError.invalidJSON("x").status.code == 400)
    }
}
