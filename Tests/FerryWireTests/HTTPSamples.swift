import Testing

@testable import FerryWire

/// Requests as LocalSend peers send them (docs/LOCALSEND.md, "Wire"), and the parts each decodes to.
enum HTTPSamples {
    struct Sample: CustomTestStringConvertible, Sendable {
        var name: String
        var bytes: [UInt8]
        var parts: [HTTPRequestPart]
        var testDescription: String { name }
    }

    static func head(
        _ method: String, _ target: String, _ fields: [(String, String)], framing: HTTPRequestHead.Framing = .none,
        minorVersion: Int = 1, keepAlive: Bool = true, expectsContinue: Bool = false
    ) -> HTTPRequestHead {
        HTTPRequestHead(
            method: method, target: target, minorVersion: minorVersion,
            headers: HTTPHeaders(fields.map { (name: $0.0, value: $0.1) }), framing: framing, keepAlive: keepAlive,
            expectsContinue: expectsContinue)
    }

    static func text(_ string: String) -> [UInt8] { Array(string.utf8) }

    static let infoGet = Sample(
        name: "GET /api/localsend/v1/info (localsend 0.1.2 asks this first)",
        bytes: text(
            "GET /api/localsend/v1/info?fingerprint=abc HTTP/1.1\r\nHost: 10.0.0.2:53317\r\nAccept: */*\r\n\r\n"),
        parts: [
            .head(
                head(
                    "GET", "/api/localsend/v1/info?fingerprint=abc",
                    [("Host", "10.0.0.2:53317"), ("Accept", "*/*")])), .end,
        ])

    static let prepareUploadBody = text(
        #"{"info":{"alias":"A","version":"2.2","fingerprint":"F","port":53317,"protocol":"https","download":false},"files":{"f":{"id":"f","fileName":"a.txt","size":5,"fileType":"text/plain"}}}"#
    )

    static let prepareUpload = Sample(
        name: "POST prepare-upload with a PIN, Content-Length (python http.client, reqwest for JSON)",
        bytes: text(
            "POST /api/localsend/v2/prepare-upload?pin=123456 HTTP/1.1\r\nHost: h\r\n"
                + "Content-Type: application/json\r\nContent-Length: \(prepareUploadBody.count)\r\n\r\n")
            + prepareUploadBody,
        parts: [
            .head(
                head(
                    "POST", "/api/localsend/v2/prepare-upload?pin=123456",
                    [
                        ("Host", "h"), ("Content-Type", "application/json"),
                        ("Content-Length", "\(prepareUploadBody.count)"),
                    ], framing: .contentLength(Int64(prepareUploadBody.count)))), .body(prepareUploadBody), .end,
        ])

    static let chunkedUpload = Sample(
        name: "POST upload, chunked with an extension and a trailer (app 1.18's reqwest streams chunked)",
        bytes: text(
            "POST /api/localsend/v2/upload?sessionId=s&fileId=f&token=t HTTP/1.1\r\nhost: h\r\n"
                + "transfer-encoding: chunked\r\n\r\n" + "5;name=value\r\nhello\r\n" + "1\r\n \r\n"
                + "A\r\n0123456789\r\n" + "0\r\nX-Checksum: none\r\n\r\n"),
        parts: [
            .head(
                head(
                    "POST", "/api/localsend/v2/upload?sessionId=s&fileId=f&token=t",
                    [("host", "h"), ("transfer-encoding", "chunked")], framing: .chunked)),
            .body(text("hello 0123456789")), .end,
        ])

    static let expectContinue = Sample(
        name: "POST upload with Expect: 100-continue and an empty body",
        bytes: text(
            "POST /api/localsend/v2/upload?sessionId=s&fileId=e&token=t HTTP/1.1\r\nHost: h\r\n"
                + "Expect: 100-continue\r\nContent-Length: 0\r\n\r\n"),
        parts: [
            .head(
                head(
                    "POST", "/api/localsend/v2/upload?sessionId=s&fileId=e&token=t",
                    [("Host", "h"), ("Expect", "100-continue"), ("Content-Length", "0")],
                    framing: .contentLength(0), expectsContinue: true)), .end,
        ])

    static let http10Close = Sample(
        name: "HTTP/1.0 without Host or keep-alive: the connection closes after it",
        bytes: text("\r\nPOST /api/localsend/v2/cancel?sessionId=s HTTP/1.0\r\nContent-Length: 2\r\n\r\nok"),
        parts: [
            .head(
                head(
                    "POST", "/api/localsend/v2/cancel?sessionId=s", [("Content-Length", "2")],
                    framing: .contentLength(2), minorVersion: 0, keepAlive: false)), .body(text("ok")), .end,
        ])

    /// Captured from httpx 0.29 (the client of PyPI `localsend` 0.1.2) posting a generator body over loopback: it
    /// streams chunked, writes a space as `+` and a plus as `%2B`.
    static let httpxStreamedUpload = Sample(
        name: "httpx 0.29 streamed upload, as captured (chunked, form-encoded query)",
        bytes: text(
            "POST /api/localsend/v2/upload?sessionId=s+1&fileId=f&token=t%2B HTTP/1.1\r\nHost: 127.0.0.1:38673\r\n"
                + "Accept: */*\r\nAccept-Encoding: gzip, deflate\r\nConnection: keep-alive\r\n"
                + "User-Agent: python-httpx/0.29.0\r\nTransfer-Encoding: chunked\r\n\r\n6\r\nhello \r\n5\r\nworld\r\n0\r\n\r\n"
        ),
        parts: [
            .head(
                head(
                    "POST", "/api/localsend/v2/upload?sessionId=s+1&fileId=f&token=t%2B",
                    [
                        ("Host", "127.0.0.1:38673"), ("Accept", "*/*"), ("Accept-Encoding", "gzip, deflate"),
                        ("Connection", "keep-alive"), ("User-Agent", "python-httpx/0.29.0"),
                        ("Transfer-Encoding", "chunked"),
                    ], framing: .chunked)), .body(text("hello world")), .end,
        ])

    static let all = [infoGet, prepareUpload, chunkedUpload, expectContinue, http10Close, httpxStreamedUpload]
}
