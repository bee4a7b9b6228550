import Testing

@testable import FerryWire

/// Each bound of `HTTPRequestDecoder` is enforced as the bytes arrive, without waiting for the end of what exceeds
/// it (docs/SECURITY.md, "Pre-authentication bounds").
@Suite("HTTP bounds")
struct HTTPBoundsTests {
    let limits = HTTPRequestLimits()

    /// Feeds `bytes` (which never complete what they start) and expects `error`, in every split.
    func expectRefused(
        _ bytes: [UInt8], _ error: HTTPError, status: Int, sourceLocation: SourceLocation = #_sourceLocation
    ) {
        #expect(error.status.code == status, sourceLocation: sourceLocation)
        let parts = HTTPDecoderVerifier.decode(bytes, in: [bytes.count]).parts
        HTTPDecoderVerifier.verify(stream: bytes, expected: parts, error: error, sourceLocation: sourceLocation)
    }

    @Test func aRequestLineLongerThanItsLimitIsRefusedBeforeItEnds() {
        let line = Array("GET /".utf8) + Array(repeating: UInt8(ascii: "a"), count: limits.maxRequestLineLength)
        expectRefused(line, .targetTooLong(limit: limits.maxRequestLineLength), status: 414)
    }

    @Test func aRequestLineAtItsLimitIsAccepted() throws {
        let target = "/" + String(repeating: "a", count: limits.maxRequestLineLength - 15)
        var decoder = HTTPRequestDecoder()
        decoder.append(Array("GET \(target) HTTP/1.1\r\nHost: h\r\n\r\n".utf8))
        #expect(try decoder.next() != nil)
    }

    @Test func aHeadThatNeverEndsIsRefusedAtItsByteLimit() {
        var bytes = Array("GET / HTTP/1.1\r\n".utf8)
        while bytes.count <= limits.maxHeadBytes {
            bytes += Array("X-Filler: \(String(repeating: "b", count: 2000))\r\n".utf8)
        }
        expectRefused(bytes, .headersTooLarge("the head is longer than \(limits.maxHeadBytes) bytes"), status: 431)
    }

    @Test func aFieldLineLongerThanItsLimitIsRefused() {
        let bytes = Array("GET / HTTP/1.1\r\nX: ".utf8) + Array(repeating: UInt8(ascii: "v"), count: 8 * 1024)
        expectRefused(bytes, .headersTooLarge("a field line is longer than 8192 bytes"), status: 431)
    }

    @Test func moreFieldsThanTheCountLimitAreRefused() {
        var bytes = Array("GET / HTTP/1.1\r\nHost: h\r\n".utf8)
        for index in 0..<limits.maxHeaderCount {
            bytes += Array("X-\(index): v\r\n".utf8)
        }
        expectRefused(bytes, .headersTooLarge("more than \(limits.maxHeaderCount) fields"), status: 431)
    }

    @Test func aChunkSizeLineLongerThanItsLimitIsRefused() {
        let bytes =
            Array("POST / HTTP/1.1\r\nHost: h\r\nTransfer-Encoding: chunked\r\n\r\n5;".utf8)
            + Array(repeating: UInt8(ascii: "e"), count: limits.maxChunkLineLength)
        expectRefused(bytes, .malformed("chunk size line longer than \(limits.maxChunkLineLength) bytes"), status: 400)
    }

    @Test func aTrailerSectionLongerThanItsLimitIsRefused() {
        var bytes = Array("POST / HTTP/1.1\r\nHost: h\r\nTransfer-Encoding: chunked\r\n\r\n0\r\n".utf8)
        while bytes.count < 200 + limits.maxTrailerBytes {
            bytes += Array("X-Trailer: \(String(repeating: "t", count: 100))\r\n".utf8)
        }
        expectRefused(
            bytes, .headersTooLarge("trailer section longer than \(limits.maxTrailerBytes) bytes"), status: 431)
    }

    /// A 64 MiB chunked upload passes through in pieces: the decoder never holds more than one read's worth plus
    /// a chunk-size line, and its buffer's capacity stays small, however large the body.
    @Test func a64MiBChunkedBodyStreamsWithBoundedMemory() throws {
        var decoder = HTTPRequestDecoder()
        decoder.append(
            Array("POST /api/localsend/v2/upload HTTP/1.1\r\nHost: h\r\nTransfer-Encoding: chunked\r\n\r\n".utf8))
        guard case .head(let head) = try #require(try decoder.next()) else { Issue.record("no head"); return }
        #expect(head.framing == .chunked)
        let chunk = [UInt8](repeating: 0x5A, count: 256 * 1024 - 3)
        let framed = HTTPResponseEncoder.chunk(chunk[...])
        let total = 64 * 1024 * 1024
        let read = 60 * 1024
        var received = 0
        var sent = 0
        var pending: [UInt8] = []
        var maximumBuffered = 0
        var maximumCapacity = 0
        var ended = false
        while !ended {
            if pending.isEmpty {
                if sent < total {
                    let size = min(chunk.count, total - sent)
                    pending = size == chunk.count ? framed : HTTPResponseEncoder.chunk(chunk[..<size])
                    sent += size
                } else {
                    pending = HTTPResponseEncoder.lastChunk
                }
            }
            let take = min(read, pending.count)
            decoder.append(pending[..<take])
            pending.removeFirst(take)
            maximumBuffered = max(maximumBuffered, decoder.bufferedByteCount)
            maximumCapacity = max(maximumCapacity, decoder.buffer.capacity)
            while let part = try decoder.next() {
                switch part {
                case .body(let piece):
                    #expect(piece.count <= read)
                    received += piece.count
                case .end: ended = true
                case .head: Issue.record("a second head")
                }
            }
        }
        #expect(received == total)
        #expect(maximumBuffered <= read)
        #expect(maximumCapacity <= 4 * read)
        #expect(decoder.isIdle)
    }
}
