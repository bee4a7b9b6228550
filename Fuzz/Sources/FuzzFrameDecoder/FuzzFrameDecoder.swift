import FerryWire
import FuzzSupport

/// libFuzzer entry: a reliable link's byte stream, fed to `FrameDecoder` in the pieces TCP might deliver.
///
/// Input: a flags byte (bit 0: the post-hello limit instead of the 1 KiB pre-authentication one; bit 1: the stream
/// starts with an 8-byte preface, decoded apart with `Preface.decode` as the TLS transport does), a byte n, then
/// n+1 split sizes (0...255 bytes each, used in turn); the rest is the stream.
/// Invariants: fed whole or in those pieces the decoder yields the same frames and error; the frames
/// re-encode to exactly the bytes consumed; every frame decodes as a session message (and a transfer message)
/// or throws, and what decodes survives a round trip.
@_cdecl("LLVMFuzzerTestOneInput")
public func fuzz(_ data: UnsafePointer<UInt8>?, _ size: Int) -> CInt {
    var input = FuzzInput(data, size)
    let flags = input.takeByte()
    let limit = flags & 1 == 0 ? Limits.maxHelloPayload : Limits.maxFramePayload
    let readsPreface = flags & 2 != 0
    var splits = (0...Int(input.takeByte() % 16)).map { _ in Int(input.takeByte()) }
    if splits.allSatisfy({ $0 == 0 }) { splits = [1] }
    var stream = input.takeRest()
    if readsPreface {
        // The preface is the transport's: 8 bytes, read before the TLS handshake, never through the frame decoder.
        let head = Array(stream.prefix(Preface.length))
        if let version = try? Preface.decode(head[...]) {
            Invariant.check(Preface.encode(version) == head, "a decoded preface does not re-encode to its bytes")
        }
        stream = Array(stream.dropFirst(head.count))
    }

    let whole = Outcome(stream: stream, splits: [stream.count], limit: limit)
    let pieces = Outcome(stream: stream, splits: splits, limit: limit)
    Invariant.check(whole == pieces, "whole and split decoding differ: \(whole) vs \(pieces)")
    let filled = Outcome(stream: stream, splits: splits, limit: limit, inPlace: true)
    Invariant.check(whole == filled, "appended and filled decoding differ: \(whole) vs \(filled)")

    var consumed: [UInt8] = []
    for frame in whole.frames {
        consumed += frame.encoded()
        if let message = RoundTrip.session(frame), case .transfer(let transferFrame) = message {
            RoundTrip.transfer(transferFrame)
        }
    }
    Invariant.check(stream.starts(with: consumed), "decoded frames do not re-encode to the stream's prefix")
    if whole.error == nil {
        Invariant.check(consumed.count + whole.buffered == stream.count, "bytes lost between frames")
    }
    return 0
}

/// What one decoder made of the stream.
struct Outcome: Equatable, CustomStringConvertible {
    var frames: [Frame] = []
    var error: WireError?
    var buffered = 0

    /// Appends `stream` in pieces of the `splits` sizes (cycled), draining the decoder after each piece, the way
    /// the session does; stops at the first error, after which the link would be closed. `inPlace`: each piece is
    /// written through `fill` instead (several fills when it spans a header and a payload), as `TLSStream` does,
    /// draining after every fill; a fill that offers no room while no frame waits is a bug.
    init(stream: [UInt8], splits: [Int], limit: Int, inPlace: Bool = false) {
        var decoder = FrameDecoder(maximumPayloadLength: limit)
        var offset = 0
        var split = 0
        repeat {
            let end = offset + min(splits[split % splits.count], stream.count - offset)
            split += 1
            repeat {
                if inPlace {
                    let start = offset
                    let written = decoder.fill { space in
                        let count = min(space.count, end - start)
                        stream[start..<(start + count)].withUnsafeBytes { space.copyMemory(from: $0) }
                        return count
                    }
                    Invariant.check(written > 0 || offset == end, "fill offered no room while no frame waited")
                    offset += written
                } else {
                    decoder.append(stream[offset..<end])
                    offset = end
                }
                do throws(WireError) {
                    while let frame = try decoder.nextFrame() {
                        Invariant.check(frame.payload.count <= limit, "a frame above the decoder's limit")
                        frames.append(frame)
                    }
                } catch {
                    self.error = error
                    return
                }
            } while offset < end
        } while offset < stream.count
        buffered = decoder.bufferedByteCount
    }

    var description: String {
        "\(frames.count) frames, error \(String(describing: error)), "
            + "\(buffered) buffered"
    }
}

@_cdecl("FuzzFrameDecoder_main")
func main(_ argc: CInt, _ argv: UnsafeMutablePointer<UnsafeMutablePointer<CChar>?>?) -> CInt {
    FuzzDriver.run(argc, argv, fuzz)
}
