import FerryTestSupport
import Testing

@testable import FerryWire

/// Feeds a byte stream to a `FrameDecoder` in every way TCP could deliver it, in the spirit of swift-nio's
/// `ByteToMessageDecoderVerifier`: whole, byte by byte and in seeded random splits; each must yield exactly
/// `expected` and leave nothing buffered.
enum DecoderVerifier {
    static func verify(
        stream: [UInt8], expected: [Frame], maximumPayloadLength: Int = Limits.maxFramePayload,
        sourceLocation: SourceLocation = #_sourceLocation
    ) throws {
        var splits: [[Int]] = [[stream.count], Array(repeating: 1, count: stream.count)]
        for seed in UInt64(1)...20 {
            var generator = SplitMix64(seed: seed)
            var sizes: [Int] = []
            var left = stream.count
            while left > 0 {
                let size = Int.random(in: 1...max(1, min(left, 40)), using: &generator)
                sizes.append(size)
                left -= size
            }
            splits.append(sizes)
        }
        for sizes in splits {
            var decoder = FrameDecoder(maximumPayloadLength: maximumPayloadLength)
            var frames: [Frame] = []
            var offset = 0
            for size in sizes {
                decoder.append(stream[offset..<(offset + size)])
                offset += size
                while let frame = try decoder.nextFrame() {
                    frames.append(frame)
                }
            }
            #expect(frames == expected, "split \(sizes.prefix(8))...", sourceLocation: sourceLocation)
            #expect(decoder.bufferedByteCount == 0, sourceLocation: sourceLocation)
        }
    }

    /// Every strict prefix of one encoded frame yields nil (need more bytes), never a frame or an error.
    static func verifyPrefixesNeedMore(
        of frameBytes: [UInt8], sourceLocation: SourceLocation = #_sourceLocation
    ) throws {
        for length in 0..<frameBytes.count {
            var decoder = FrameDecoder(maximumPayloadLength: Limits.maxFramePayload)
            decoder.append(frameBytes[..<length])
            #expect(try decoder.nextFrame() == nil, "prefix of \(length) bytes", sourceLocation: sourceLocation)
            #expect(decoder.bufferedByteCount == length, sourceLocation: sourceLocation)
        }
    }
}
