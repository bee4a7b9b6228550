extension HTTPRequestDecoder {
    /// Derives framing, keep-alive and the expectation from the header fields, refusing every ambiguity a
    /// request smuggler relies on (RFC 9112 6.1-6.3): `Content-Length` beside `Transfer-Encoding`, lengths that
    /// disagree, a coding other than one `chunked`, a chunked HTTP/1.0 request, a missing or repeated `Host`.
    static func interpret(_ head: inout HTTPRequestHead) throws(HTTPError) {
        let headers = head.headers
        let hosts = headers.values(for: "Host")
        guard hosts.count == 1 || (hosts.isEmpty && head.minorVersion == 0) else {
            throw .malformed("Host: \(hosts.count) fields, exactly one is required")
        }
        let lengths = headers.values(for: "Content-Length")
        let codings = headers.values(for: "Transfer-Encoding")
        if !codings.isEmpty {
            guard lengths.isEmpty else { throw .malformed("both Content-Length and Transfer-Encoding") }
            guard head.minorVersion == 1 else { throw .malformed("Transfer-Encoding in an HTTP/1.0 request") }
            let elements = headers.listElements(for: "Transfer-Encoding")
            if let unknown = elements.first(where: { !HTTPHeaders.equalIgnoringCase($0, "chunked") }) {
                throw .notImplemented(String(unknown.prefix(32)))
            }
            guard elements.count == 1 else { throw .malformed("Transfer-Encoding: not exactly one chunked") }
            head.framing = .chunked
        } else if !lengths.isEmpty {
            var length: Int64?
            for element in lengths.flatMap({ $0.split(separator: ",", omittingEmptySubsequences: false) }) {
                let digits = HTTPSyntax.trimmed(element).utf8
                guard (1...19).contains(digits.count),
                    digits.allSatisfy({ (UInt8(ascii: "0")...UInt8(ascii: "9")).contains($0) }),
                    let value = Int64(String(decoding: digits, as: UTF8.self))
                else { throw .malformed("Content-Length: not a decimal length") }
                guard length == nil || length == value else { throw .malformed("Content-Length: values disagree") }
                length = value
            }
            head.framing = length.map { .contentLength($0) } ?? .none
        } else {
            head.framing = .none
        }
        let connection = headers.listElements(for: "Connection")
        if connection.contains(where: { HTTPHeaders.equalIgnoringCase($0, "close") }) {
            head.keepAlive = false
        } else {
            head.keepAlive =
                head.minorVersion == 1 || connection.contains { HTTPHeaders.equalIgnoringCase($0, "keep-alive") }
        }
        let expectations = headers.listElements(for: "Expect")
        if let other = expectations.first(where: { !HTTPHeaders.equalIgnoringCase($0, "100-continue") }) {
            throw .expectationFailed(String(other.prefix(32)))
        }
        // A server ignores 100-continue from an HTTP/1.0 client (RFC 9110 10.1.1), which cannot read a 100.
        head.expectsContinue = !expectations.isEmpty && head.minorVersion == 1
    }

    /// Reads a chunk-size line (`1*HEXDIG [BWS ";" extensions] CRLF`, extensions skipped) and returns the size,
    /// or nil when the line has not arrived.
    mutating func takeChunkSize() throws(HTTPError) -> Int64? {
        let limit = limits.maxChunkLineLength
        let tooLong = HTTPError.malformed("chunk size line longer than \(limit) bytes")
        guard let lineFeed = try lineEnd(from: 0, limit: limit, tooLong: tooLong) else { return nil }
        let line = buffer[readIndex..<(lineFeed - 1)]
        var size: Int64 = 0
        var index = line.startIndex
        while index < line.endIndex, let digit = Self.hexValue(line[index]) {
            guard size <= (Int64.max - 15) / 16 else { throw .malformed("chunk size too large") }
            size = size * 16 + Int64(digit)
            index += 1
        }
        guard index > line.startIndex else { throw .malformed("chunk size: not hexadecimal") }
        let rest = line[index...].drop { $0 == HTTPSyntax.space || $0 == HTTPSyntax.tab }
        guard rest.isEmpty || (rest.first == UInt8(ascii: ";") && rest.allSatisfy(HTTPSyntax.isFieldValueCharacter))
        else { throw .malformed("chunk size: unexpected bytes after the size") }
        consume(upTo: lineFeed + 1)
        return size
    }

    /// Reads and checks the trailer section after the last chunk, discarding its fields; returns false when its
    /// empty line has not arrived yet. Nothing is consumed until the whole section is here; lines already checked
    /// are not scanned or parsed again (`trailerScanned`), so a section fed a byte at a time costs linear time.
    mutating func skipTrailers() throws(HTTPError) -> Bool {
        let limit = limits.maxTrailerBytes
        let tooLarge = HTTPError.headersTooLarge("trailer section longer than \(limit) bytes")
        var offset = trailerScanned
        while true {
            guard let lineFeed = try lineEnd(from: offset, limit: limit - offset, tooLong: tooLarge) else {
                return false
            }
            let line = buffer[(readIndex + offset)..<(lineFeed - 1)]
            if line.isEmpty {
                trailerScanned = 0
                consume(upTo: lineFeed + 1)
                return true
            }
            _ = try Self.parseField(line, what: "trailer field")
            trailerFieldsParsed &+= 1
            offset = lineFeed + 1 - readIndex
            guard offset <= limit else { throw tooLarge }
            trailerScanned = offset
        }
    }

    static func hexValue(_ byte: UInt8) -> UInt8? {
        switch byte {
        case UInt8(ascii: "0")...UInt8(ascii: "9"): byte - UInt8(ascii: "0")
        case UInt8(ascii: "a")...UInt8(ascii: "f"): byte - UInt8(ascii: "a") + 10
        case UInt8(ascii: "A")...UInt8(ascii: "F"): byte - UInt8(ascii: "A") + 10
        default: nil
        }
    }
}
