import FerryWire
import FuzzSupport

/// libFuzzer entry: a reliable link's byte stream, fed to `FrameDecoder` in the pieces TCP might deliver.
///
/// Input: a flags byte (bit 0: the post-hello limit instead of the 1 KiB pre-authentication one; bit 1: a preface
/// first), a byte n, then n+1 split sizes (0...255 bytes each, used in turn); the rest is the stream.
/// Invariants: fed whole or in those pieces the decoder yields the same preface, frames and error; the frames
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
    let stream = input.takeRest()

    let whole = Outcome(stream: stream, splits: [stream.count], limit: limit, readsPreface: readsPreface)
    let pieces = Outcome(stream: stream, splits: splits, limit: limit, readsPreface: readsPreface)
    Invariant.check(whole == pieces, "whole and split decoding differ: \(whole) vs \(pieces)")

    var consumed = whole.preface.map { Preface.encode($0) } ?? []
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
    var preface: ProtocolVersion?
    var frames: [Frame] = []
    var error: WireError?
    var buffered = 0

    /// Appends `stream` in pieces of the `splits` sizes (cycled), draining the decoder after each piece, the way
    /// the session does; stops at the first error, after which the link would be closed.
    init(stream: [UInt8], splits: [Int], limit: Int, readsPreface: Bool) {
        var decoder = FrameDecoder(maximumPayloadLength: limit)
        var offset = 0
        var split = 0
        var needsPreface = readsPreface
        repeat {
            let end = offset + min(splits[split % splits.count], stream.count - offset)
            decoder.append(stream[offset..<end])
            offset = end
            split += 1
            do throws(WireError) {
                if needsPreface {
                    guard let version = try decoder.nextPreface() else { continue }
                    preface = version
                    needsPreface = false
                }
                while let frame = try decoder.nextFrame() {
                    Invariant.check(frame.payload.count <= limit, "a frame above the decoder's limit")
                    frames.append(frame)
                }
            } catch {
                self.error = error
                return
            }
        } while offset < stream.count
        buffered = decoder.bufferedByteCount
    }

    var description: String {
        "preface \(String(describing: preface)), \(frames.count) frames, error \(String(describing: error)), "
            + "\(buffered) buffered"
    }
}

@_cdecl("FuzzFrameDecoder_main")
func main(_ argc: CInt, _ argv: UnsafeMutablePointer<UnsafeMutablePointer<CChar>?>?) -> CInt {
    FuzzDriver.run(argc, argv, fuzz)
}
