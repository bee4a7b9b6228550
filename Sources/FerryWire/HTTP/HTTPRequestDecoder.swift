/// Incremental decoder of an HTTP/1.1 (and 1.0) request stream, the server side of ferry's HTTPS adapter: give it
/// bytes with `append`, then call `next()` until it returns nil (need more bytes).
///
/// In swift-nio's decoder spirit: pure (no I/O), typed parts out (`.head`, `.body`, `.end`), a throw for
/// malformed bytes or an exceeded bound (`HTTPError`, whose `status` is what the server answers before closing).
/// Every bound is checked as bytes arrive: a head that does not end within `maxHeadBytes`, a line longer than
/// its limit, a chunk-size line that never ends, all throw without waiting for more.
///
/// Bodies stream: each `.body` piece is what was appended since the last one (chunk framing removed), so a 1 GiB
/// upload passes through in pieces and the decoder holds only what the caller appended and has not taken yet
/// (`bufferedByteCount`). Backpressure is the caller's: it stops reading its socket while it cannot take pieces.
/// After `.end` the next request's head is decoded from the bytes that followed (pipelining); whether the
/// connection may go on is `HTTPRequestHead.keepAlive`, the driver's to act on.
///
/// After a throw the decoder stays failed (every later `next()` throws the same error): a request stream
/// cannot be resynchronised, the driver answers the error's status and closes.
public struct HTTPRequestDecoder: Sendable {
    /// The bounds this decoder enforces on every request of the stream.
    public let limits: HTTPRequestLimits

    enum State: Equatable, Sendable {
        case head
        case body(remaining: Int64)
        case chunkSize
        case chunkData(remaining: Int64)
        case chunkDataEnd
        case trailers
        case endPending
    }

    var state = State.head
    var buffer: [UInt8] = []
    var readIndex = 0
    /// While in `.head`: bytes after `readIndex` already checked as complete lines, and how many lines that was.
    var headScanned = 0
    var headLines = 0
    /// Where (after `readIndex`) the line `lineEnd` last left unfinished starts, and how far it was checked.
    var lineScanStart = 0
    var lineScanned = 0
    /// While in `.trailers`: bytes after `readIndex` already checked and parsed as complete trailer lines.
    var trailerScanned = 0
    /// Work counters for tests that the decoder stays linear when fed a byte at a time: bytes `lineEnd` looked at,
    /// trailer fields parsed (wrapping; never read by the decoder itself).
    var scannedByteCount = 0
    var trailerFieldsParsed = 0
    private var failure: HTTPError?

    /// Above this capacity an emptied buffer gives its memory back.
    private static let retainedCapacity = 64 * 1024

    /// A decoder at the start of a request stream, bounded by `limits`.
    public init(limits: HTTPRequestLimits = HTTPRequestLimits()) {
        self.limits = limits
    }

    /// Bytes appended and not yet returned in a part.
    public var bufferedByteCount: Int { buffer.count - readIndex }

    /// Whether the decoder sits between requests with nothing buffered: a connection closed now lost nothing.
    public var isIdle: Bool { state == .head && bufferedByteCount == 0 }

    /// Adds bytes read from the connection; parts are taken out with `next()`.
    public mutating func append(_ bytes: [UInt8]) {
        append(bytes[...])
    }

    /// Adds bytes read from the connection; parts are taken out with `next()`.
    public mutating func append(_ bytes: ArraySlice<UInt8>) {
        guard !bytes.isEmpty else { return }
        if readIndex > 0, readIndex >= buffer.count - readIndex {
            buffer.removeSubrange(0..<readIndex)
            readIndex = 0
        }
        buffer.append(contentsOf: bytes)
    }

    /// The next part of the request stream, or nil when more bytes are needed.
    public mutating func next() throws(HTTPError) -> HTTPRequestPart? {
        if let failure { throw failure }
        do {
            return try step()
        } catch {
            failure = error
            throw error
        }
    }

    private mutating func step() throws(HTTPError) -> HTTPRequestPart? {
        while true {
            switch state {
            case .head:
                guard let end = try scanHead() else { return nil }
                let head = try Self.parseHead(buffer[readIndex..<end])
                consume(upTo: end)
                headScanned = 0
                headLines = 0
                switch head.framing {
                case .none, .contentLength(0): state = .endPending
                case .contentLength(let length): state = .body(remaining: length)
                case .chunked: state = .chunkSize
                }
                return .head(head)
            case .body(let remaining):
                guard let piece = takePiece(remaining) else { return nil }
                let left = remaining - Int64(piece.count)
                state = left == 0 ? .endPending : .body(remaining: left)
                return .body(piece)
            case .chunkData(let remaining):
                guard let piece = takePiece(remaining) else { return nil }
                let left = remaining - Int64(piece.count)
                state = left == 0 ? .chunkDataEnd : .chunkData(remaining: left)
                return .body(piece)
            case .chunkSize:
                guard let size = try takeChunkSize() else { return nil }
                state = size == 0 ? .trailers : .chunkData(remaining: size)
            case .chunkDataEnd:
                guard bufferedByteCount >= 2 else {
                    if bufferedByteCount == 1, buffer[readIndex] != HTTPSyntax.cr {
                        throw .malformed("chunk data: not followed by CRLF")
                    }
                    return nil
                }
                guard buffer[readIndex] == HTTPSyntax.cr, buffer[readIndex + 1] == HTTPSyntax.lf else {
                    throw .malformed("chunk data: not followed by CRLF")
                }
                consume(upTo: readIndex + 2)
                state = .chunkSize
            case .trailers:
                guard try skipTrailers() else { return nil }
                state = .endPending
            case .endPending:
                state = .head
                return .end
            }
        }
    }

    /// Up to `remaining` buffered body bytes, or nil when none is buffered.
    private mutating func takePiece(_ remaining: Int64) -> [UInt8]? {
        let available = bufferedByteCount
        guard available > 0 else { return nil }
        let count = Int(min(Int64(available), remaining))
        let piece = Array(buffer[readIndex..<(readIndex + count)])
        consume(upTo: readIndex + count)
        return piece
    }

    mutating func consume(upTo index: Int) {
        lineScanStart = max(0, lineScanStart - (index - readIndex))
        lineScanned = max(0, lineScanned - (index - readIndex))
        readIndex = index
        if readIndex == buffer.count {
            buffer.removeAll(keepingCapacity: buffer.capacity <= Self.retainedCapacity)
            readIndex = 0
        }
    }

    /// The index of the LF ending the line that starts `offset` bytes after `readIndex`, or nil when it has not
    /// arrived and the part that has is within `limit` (else `tooLong` is thrown). Checks the line as it goes:
    /// no NUL, every CR followed by LF, every LF preceded by CR. Bytes of the same line checked by an earlier call
    /// that returned nil are not checked again (`lineScanned`), so a line fed a byte at a time costs linear time.
    mutating func lineEnd(from offset: Int, limit: Int, tooLong: HTTPError) throws(HTTPError) -> Int? {
        let start = readIndex + offset
        var index = lineScanStart == offset ? max(start, readIndex + lineScanned) : start
        let firstIndex = index
        defer { scannedByteCount &+= index - firstIndex }
        while index < buffer.count {
            let byte = buffer[index]
            if byte == HTTPSyntax.lf {
                guard index > start, buffer[index - 1] == HTTPSyntax.cr else { throw .malformed("bare LF") }
                guard index - 1 - start <= limit else { throw tooLong }
                lineScanStart = index + 1 - readIndex
                lineScanned = lineScanStart
                return index
            }
            if byte == 0 { throw .malformed("NUL byte") }
            if index > start, buffer[index - 1] == HTTPSyntax.cr { throw .malformed("bare CR") }
            index += 1
        }
        lineScanStart = offset
        lineScanned = index - readIndex
        // The last byte may be the CR of a CRLF still to come; it is not part of the line's length.
        let partial = index - start - (index > start && buffer[index - 1] == HTTPSyntax.cr ? 1 : 0)
        guard partial <= limit else { throw tooLong }
        return nil
    }
}
