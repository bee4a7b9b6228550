import FerryWire
import FuzzSupport

/// The longest stream also fed a byte at a time (`next()` after each byte; linear, but one part per byte).
let byteByByteCap = 8 * 1024

/// libFuzzer entry: a request stream for ferry's HTTPS server, fed to `HTTPRequestDecoder` in the pieces TCP might
/// deliver.
///
/// Input: a byte n, then n+1 split sizes (0...255 bytes each, used in turn); the rest is the stream.
/// Invariants: fed whole, in those pieces or (up to `byteByByteCap` bytes) a byte at a time the decoder yields the
/// same parts (body pieces joined) and the same error; parts come as head, body pieces, end, head...; a body framed
/// by `Content-Length` ends after exactly that many bytes; the decoder never holds more than it was given; every
/// head's target splits into an `HTTPTarget` or throws `HTTPError`, and its LocalSend query reads or throws, never
/// traps.
@_cdecl("LLVMFuzzerTestOneInput")
public func fuzz(_ data: UnsafePointer<UInt8>?, _ size: Int) -> CInt {
    var input = FuzzInput(data, size)
    var splits = (0...Int(input.takeByte() % 16)).map { _ in Int(input.takeByte()) }
    if splits.allSatisfy({ $0 == 0 }) { splits = [1] }
    let stream = input.takeRest()

    let whole = Outcome(stream: stream, splits: [max(1, stream.count)])
    let pieces = Outcome(stream: stream, splits: splits)
    Invariant.check(whole == pieces, "whole and split decoding differ: \(whole) vs \(pieces)")
    // A byte at a time too (as a slow or hostile client sends), for inputs short enough to keep a run fast.
    if stream.count <= byteByByteCap {
        let bytes = Outcome(stream: stream, splits: [1])
        Invariant.check(whole == bytes, "whole and byte-by-byte decoding differ: \(whole) vs \(bytes)")
    }

    var expectedBody: Int64?
    var bodySeen: Int64 = 0
    var inRequest = false
    for part in whole.parts {
        switch part {
        case .head(let head):
            Invariant.check(!inRequest, "a head inside a request")
            inRequest = true
            bodySeen = 0
            if case .contentLength(let length) = head.framing { expectedBody = length } else { expectedBody = nil }
            if let target = try? HTTPTarget(head.target) {
                Invariant.check(target.path.utf8.first == UInt8(ascii: "/") || head.target == "*", "path lost its /")
                _ = try? LocalSendQuery(target)
            }
        case .body(let piece):
            Invariant.check(inRequest && !piece.isEmpty, "an empty or stray body piece")
            bodySeen += Int64(piece.count)
            if let expectedBody { Invariant.check(bodySeen <= expectedBody, "body past its Content-Length") }
        case .end:
            Invariant.check(inRequest, "an end without a head")
            if let expectedBody { Invariant.check(bodySeen == expectedBody, "body shorter than its Content-Length") }
            inRequest = false
        }
    }
    Invariant.check(whole.buffered <= stream.count, "buffered more than given")
    return 0
}

/// What one decoder made of the stream: parts with consecutive body pieces joined, the error, what stayed buffered.
struct Outcome: Equatable, CustomStringConvertible {
    var parts: [HTTPRequestPart] = []
    var error: HTTPError?
    var buffered = 0

    init(stream: [UInt8], splits: [Int]) {
        var decoder = HTTPRequestDecoder()
        var body: [UInt8] = []
        var offset = 0
        var split = 0
        // Body pieces are gathered in `body` (amortised appends, so a stream fed a byte at a time stays linear).
        func flush(_ parts: inout [HTTPRequestPart]) {
            if !body.isEmpty { parts.append(.body(body)) }
            body = []
        }
        repeat {
            let end = offset + min(splits[split % splits.count], stream.count - offset)
            split += 1
            decoder.append(stream[offset..<end])
            offset = end
            do throws(HTTPError) {
                while let part = try decoder.next() {
                    if case .body(let piece) = part {
                        body += piece
                    } else {
                        flush(&parts)
                        parts.append(part)
                    }
                }
            } catch {
                flush(&parts)
                self.error = error
                return
            }
        } while offset < stream.count
        flush(&parts)
        // After an error what stays buffered depends on the pieces given; it is compared only without one.
        buffered = decoder.bufferedByteCount
    }

    var description: String {
        "\(parts.count) parts, error \(String(describing: error)), \(buffered) buffered"
    }
}

@_cdecl("FuzzHTTPRequest_main")
func main(_ argc: CInt, _ argv: UnsafeMutablePointer<UnsafeMutablePointer<CChar>?>?) -> CInt {
    FuzzDriver.run(argc, argv, fuzz)
}
