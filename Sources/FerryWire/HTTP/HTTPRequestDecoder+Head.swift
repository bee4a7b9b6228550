extension HTTPRequestDecoder {
    /// Checks the head's lines as they arrive and returns the index just past its empty line, or nil when it has
    /// not ended yet. Throws as soon as a line or the whole head exceeds its bound.
    mutating func scanHead() throws(HTTPError) -> Int? {
        while true {
            let isRequestLine = headLines == 0
            let limit = isRequestLine ? limits.maxRequestLineLength : limits.maxHeaderLineLength
            let tooLong: HTTPError =
                isRequestLine
                ? .targetTooLong(limit: limit) : .headersTooLarge("a field line is longer than \(limit) bytes")
            guard let lineFeed = try lineEnd(from: headScanned, limit: limit, tooLong: tooLong) else {
                guard bufferedByteCount <= limits.maxHeadBytes else {
                    throw .headersTooLarge("the head is longer than \(limits.maxHeadBytes) bytes")
                }
                return nil
            }
            let lineLength = lineFeed - 1 - (readIndex + headScanned)
            headScanned = lineFeed + 1 - readIndex
            guard headScanned <= limits.maxHeadBytes else {
                throw .headersTooLarge("the head is longer than \(limits.maxHeadBytes) bytes")
            }
            if lineLength == 0 {
                // Empty lines before the request line are ignored (RFC 9112 2.2); after it, one ends the head.
                if isRequestLine { continue }
                return lineFeed + 1
            }
            headLines += 1
            guard headLines - 1 <= limits.maxHeaderCount else {
                throw .headersTooLarge("more than \(limits.maxHeaderCount) fields")
            }
        }
    }

    /// The head in `bytes` (lines already checked by `scanHead`: CRLF-terminated, no NUL, within their bounds).
    static func parseHead(_ bytes: ArraySlice<UInt8>) throws(HTTPError) -> HTTPRequestHead {
        let lines = bytes.split(separator: HTTPSyntax.lf).map { $0.dropLast() }.filter { !$0.isEmpty }
        guard let requestLine = lines.first else { throw .malformed("no request line") }
        var head = try parseRequestLine(requestLine)
        var headers = HTTPHeaders()
        for line in lines.dropFirst() {
            let (name, value) = try parseField(line, what: "header field")
            headers.add(name: name, value: value)
        }
        head.headers = headers
        try interpret(&head)
        return head
    }

    /// `method SP request-target SP HTTP-version`, single spaces, origin-form target (or `*` for OPTIONS).
    static func parseRequestLine(_ line: ArraySlice<UInt8>) throws(HTTPError) -> HTTPRequestHead {
        let parts = line.split(separator: HTTPSyntax.space, omittingEmptySubsequences: false)
        guard parts.count == 3 else { throw .malformed("request line: not method, target and version") }
        guard HTTPSyntax.isToken(parts[0]) else { throw .malformed("method: not a token") }
        let target = parts[1]
        guard !target.isEmpty, target.allSatisfy({ (0x21...0x7E).contains($0) }) else {
            throw .malformed("request target: empty or not visible ASCII")
        }
        let method = String(decoding: parts[0], as: UTF8.self)
        let isAsterisk = target.elementsEqual("*".utf8) && method == "OPTIONS"
        guard target.first == UInt8(ascii: "/") || isAsterisk else {
            throw .malformed("request target: not origin-form")
        }
        let version = Array(parts[2])
        let digit = UInt8(ascii: "0")...UInt8(ascii: "9")
        guard version.count == 8, version.starts(with: "HTTP/".utf8), digit.contains(version[5]),
            version[6] == UInt8(ascii: "."), digit.contains(version[7])
        else { throw .malformed("HTTP version: not HTTP/d.d") }
        guard version[5] == UInt8(ascii: "1"), version[7] <= UInt8(ascii: "1") else {
            throw .unsupportedVersion(String(decoding: version, as: UTF8.self))
        }
        return HTTPRequestHead(
            method: method, target: String(decoding: target, as: UTF8.self),
            minorVersion: Int(version[7] - UInt8(ascii: "0")))
    }

    /// `field-name ":" OWS field-value OWS`; no obs-fold, no whitespace before the colon, no control bytes.
    static func parseField(_ line: ArraySlice<UInt8>, what: String) throws(HTTPError) -> (String, String) {
        guard let first = line.first, first != HTTPSyntax.space, first != HTTPSyntax.tab else {
            throw .malformed("\(what): obsolete line folding")
        }
        guard let colon = line.firstIndex(of: UInt8(ascii: ":")) else { throw .malformed("\(what): no colon") }
        guard HTTPSyntax.isToken(line[..<colon]) else { throw .malformed("\(what): name is not a token") }
        let value = line[(colon + 1)...]
        guard value.allSatisfy(HTTPSyntax.isFieldValueCharacter) else {
            throw .malformed("\(what): control byte in value")
        }
        let name = String(decoding: line[..<colon], as: UTF8.self)
        return (name, HTTPSyntax.trimmed(Substring(HTTPSyntax.string(value))))
    }
}
