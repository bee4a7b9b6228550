import Testing

@testable import FerryWire

@Suite("HTTPRequestDecoder")
struct HTTPRequestDecoderTests {
    @Test(arguments: HTTPSamples.all)
    func eachRequestDecodesTheSameInEverySplit(_ sample: HTTPSamples.Sample) {
        HTTPDecoderVerifier.verify(stream: sample.bytes, expected: sample.parts)
    }

    @Test(arguments: HTTPSamples.all)
    func eachRequestIsFollowedByAPipelinedSecondOne(_ sample: HTTPSamples.Sample) {
        for second in HTTPSamples.all {
            HTTPDecoderVerifier.verify(stream: sample.bytes + second.bytes, expected: sample.parts + second.parts)
        }
    }

    @Test(arguments: HTTPSamples.all)
    func everyTruncatedPrefixNeedsMoreBytes(_ sample: HTTPSamples.Sample) {
        HTTPDecoderVerifier.verifyPrefixesNeedMore(of: sample.bytes)
        HTTPDecoderVerifier.verifyPrefixesNeedMore(of: sample.bytes + HTTPSamples.infoGet.bytes)
    }

    @Test func keepAliveFollowsTheVersionAndTheConnectionField() throws {
        func keepAlive(_ request: String) throws -> Bool {
            var decoder = HTTPRequestDecoder()
            decoder.append(Array(request.utf8))
            guard case .head(let head) = try #require(try decoder.next()) else { throw HTTPError.malformed("no head") }
            return head.keepAlive
        }
        #expect(try keepAlive("GET / HTTP/1.1\r\nHost: h\r\n\r\n"))
        #expect(try !keepAlive("GET / HTTP/1.1\r\nHost: h\r\nConnection: Close\r\n\r\n"))
        #expect(try !keepAlive("GET / HTTP/1.1\r\nHost: h\r\nConnection: upgrade, close\r\n\r\n"))
        #expect(try !keepAlive("GET / HTTP/1.0\r\n\r\n"))
        #expect(try keepAlive("GET / HTTP/1.0\r\nConnection: Keep-Alive\r\n\r\n"))
    }

    @Test func duplicateContentLengthsThatAgreeAreOneLength() {
        let request = "POST / HTTP/1.1\r\nHost: h\r\nContent-Length: 3\r\nContent-Length: 3, 3\r\n\r\nabc"
        HTTPDecoderVerifier.verify(
            stream: Array(request.utf8),
            expected: [
                .head(
                    HTTPSamples.head(
                        "POST", "/", [("Host", "h"), ("Content-Length", "3"), ("Content-Length", "3, 3")],
                        framing: .contentLength(3))), .body(Array("abc".utf8)), .end,
            ])
    }

    /// Each malformed request and the error, so the status, a server answers; the same in every split.
    static let refusals: [(String, String, HTTPError, Int)] = [
        (
            "obs-fold", "GET / HTTP/1.1\r\nHost: h\r\nX: a\r\n b\r\n\r\n",
            .malformed("header field: obsolete line folding"), 400
        ),
        ("bare CR", "GET / HTTP/1.1\r\nHost: h\rX: a\r\n\r\n", .malformed("bare CR"), 400),
        ("bare LF", "GET / HTTP/1.1\nHost: h\r\n\r\n", .malformed("bare LF"), 400),
        ("NUL", "GET / HTTP/1.1\r\nHost: h\0\r\n\r\n", .malformed("NUL byte"), 400),
        (
            "space before colon", "GET / HTTP/1.1\r\nHost : h\r\n\r\n",
            .malformed("header field: name is not a token"), 400
        ),
        ("invalid token", "GET / HTTP/1.1\r\nHo(st: h\r\n\r\n", .malformed("header field: name is not a token"), 400),
        (
            "control in value", "GET / HTTP/1.1\r\nHost: h\u{7}\r\n\r\n",
            .malformed("header field: control byte in value"), 400
        ),
        ("method not a token", "G(T / HTTP/1.1\r\nHost: h\r\n\r\n", .malformed("method: not a token"), 400),
        (
            "two spaces", "GET  / HTTP/1.1\r\nHost: h\r\n\r\n",
            .malformed("request line: not method, target and version"), 400
        ),
        (
            "absolute-form", "GET http://h/ HTTP/1.1\r\nHost: h\r\n\r\n",
            .malformed("request target: not origin-form"), 400
        ),
        ("no Host", "GET / HTTP/1.1\r\n\r\n", .malformed("Host: 0 fields, exactly one is required"), 400),
        (
            "two Hosts", "GET / HTTP/1.1\r\nHost: a\r\nHost: b\r\n\r\n",
            .malformed("Host: 2 fields, exactly one is required"), 400
        ),
        (
            "lengths disagree", "POST / HTTP/1.1\r\nHost: h\r\nContent-Length: 3\r\nContent-Length: 4\r\n\r\n",
            .malformed("Content-Length: values disagree"), 400
        ),
        (
            "length list disagrees", "POST / HTTP/1.1\r\nHost: h\r\nContent-Length: 3, 4\r\n\r\n",
            .malformed("Content-Length: values disagree"), 400
        ),
        (
            "negative length", "POST / HTTP/1.1\r\nHost: h\r\nContent-Length: -1\r\n\r\n",
            .malformed("Content-Length: not a decimal length"), 400
        ),
        (
            "length past Int64", "POST / HTTP/1.1\r\nHost: h\r\nContent-Length: 9223372036854775808\r\n\r\n",
            .malformed("Content-Length: not a decimal length"), 400
        ),
        (
            "length and chunked",
            "POST / HTTP/1.1\r\nHost: h\r\nContent-Length: 3\r\nTransfer-Encoding: chunked\r\n\r\n",
            .malformed("both Content-Length and Transfer-Encoding"), 400
        ),
        (
            "gzip", "POST / HTTP/1.1\r\nHost: h\r\nTransfer-Encoding: gzip, chunked\r\n\r\n",
            .notImplemented("gzip"), 501
        ),
        (
            "chunked twice",
            "POST / HTTP/1.1\r\nHost: h\r\nTransfer-Encoding: chunked\r\nTransfer-Encoding: chunked\r\n\r\n",
            .malformed("Transfer-Encoding: not exactly one chunked"), 400
        ),
        (
            "chunked 1.0", "POST / HTTP/1.0\r\nTransfer-Encoding: chunked\r\n\r\n",
            .malformed("Transfer-Encoding in an HTTP/1.0 request"), 400
        ),
        ("HTTP/2.0", "GET / HTTP/2.0\r\nHost: h\r\n\r\n", .unsupportedVersion("HTTP/2.0"), 505),
        ("HTTP/1.2", "GET / HTTP/1.2\r\nHost: h\r\n\r\n", .unsupportedVersion("HTTP/1.2"), 505),
        ("not a version", "GET / HTTP/1.10\r\nHost: h\r\n\r\n", .malformed("HTTP version: not HTTP/d.d"), 400),
        (
            "other expectation", "PUT / HTTP/1.1\r\nHost: h\r\nExpect: 200-ok\r\n\r\n",
            .expectationFailed("200-ok"), 417
        ),
        (
            "chunk size not hex", "POST / HTTP/1.1\r\nHost: h\r\nTransfer-Encoding: chunked\r\n\r\nz\r\n",
            .malformed("chunk size: not hexadecimal"), 400
        ),
        (
            "chunk size overflow",
            "POST / HTTP/1.1\r\nHost: h\r\nTransfer-Encoding: chunked\r\n\r\n8000000000000000\r\n",
            .malformed("chunk size too large"), 400
        ),
        (
            "chunk data without CRLF", "POST / HTTP/1.1\r\nHost: h\r\nTransfer-Encoding: chunked\r\n\r\n1\r\nab\r\n",
            .malformed("chunk data: not followed by CRLF"), 400
        ),
        (
            "chunk size junk", "POST / HTTP/1.1\r\nHost: h\r\nTransfer-Encoding: chunked\r\n\r\n1 x\r\n",
            .malformed("chunk size: unexpected bytes after the size"), 400
        ),
        (
            "trailer obs-fold", "POST / HTTP/1.1\r\nHost: h\r\nTransfer-Encoding: chunked\r\n\r\n0\r\n x\r\n\r\n",
            .malformed("trailer field: obsolete line folding"), 400
        ),
    ]

    @Test func eachMalformedRequestIsRefusedWithItsStatusInEverySplit() {
        for (name, request, error, status) in Self.refusals {
            let bytes = Array(request.utf8)
            let parts = HTTPDecoderVerifier.decode(bytes, in: [bytes.count]).parts
            #expect(error.status.code == status, "\(name)")
            HTTPDecoderVerifier.verify(stream: bytes, expected: parts, error: error)
            #expect(!parts.contains(.end), "\(name): a refused request never ends")
        }
    }

    /// A trailer section fed a byte at a time is scanned and parsed once, not again from its start on every
    /// `next()` (a pre-authentication CPU amplifier: 600 short trailer lines cost ~1.8M line parses otherwise).
    @Test func aTrailerSectionFedAByteAtATimeIsScannedAndParsedOnce() throws {
        let lines = 600
        let trailer = String(repeating: "a: 1\r\n", count: lines)
        let request = Array("POST / HTTP/1.1\r\nHost: h\r\nTransfer-Encoding: chunked\r\n\r\n0\r\n\(trailer)\r\n".utf8)
        var decoder = HTTPRequestDecoder()
        var parts: [HTTPRequestPart] = []
        for byte in request {
            decoder.append([byte])
            while let part = try decoder.next() { parts.append(part) }
        }
        #expect(parts.last == .end)
        #expect(decoder.trailerFieldsParsed == lines, "each trailer line is parsed once")
        #expect(decoder.scannedByteCount <= 2 * request.count, "bytes scanned grow linearly with the request")
    }

    @Test func afterAnErrorTheDecoderStaysFailed() {
        var decoder = HTTPRequestDecoder()
        decoder.append(Array("GET / HTTP/3.0\r\n\r\n".utf8))
        #expect(throws: HTTPError.unsupportedVersion("HTTP/3.0")) { try decoder.next() }
        decoder.append(HTTPSamples.infoGet.bytes)
        #expect(throws: HTTPError.unsupportedVersion("HTTP/3.0")) { try decoder.next() }
    }
}
