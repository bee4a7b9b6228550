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
            let filled = try fill(stream, in: sizes, maximumPayloadLength: maximumPayloadLength)
            #expect(filled.frames == expected, "filled in \(sizes.prefix(8))...", sourceLocation: sourceLocation)
            #expect(filled.buffered == 0, sourceLocation: sourceLocation)
        }
    }

    /// A fill that offered no room although no frame was waiting: the decoder would never make progress.
    struct Stuck: Error {
        var offset: Int
    }

    /// Feeds `stream` the way a link reads it: each piece of `sizes` is written in place through `fill` (which
    /// takes at most `fillableByteCount` bytes at a time, so a piece may take several fills), draining the decoder
    /// after every fill.
    static func fill(
        _ stream: [UInt8], in sizes: [Int], maximumPayloadLength: Int = Limits.maxFramePayload
    ) throws -> (frames: [Frame], buffered: Int) {
        var decoder = FrameDecoder(maximumPayloadLength: maximumPayloadLength)
        var frames: [Frame] = []
        var offset = 0
        for size in sizes {
            let end = offset + size
            while offset < end {
                let wanted = decoder.fillableByteCount
                let written = decoder.fill { space in
                    precondition(space.count == wanted, "fill offers fillableByteCount bytes")
                    let count = min(space.count, end - offset)
                    stream[offset..<(offset + count)].withUnsafeBytes { space.copyMemory(from: $0) }
                    return count
                }
                guard written > 0 else { throw Stuck(offset: offset) }
                offset += written
                while let frame = try decoder.nextFrame() {
                    frames.append(frame)
                }
            }
        }
        return (frames, decoder.bufferedByteCount)
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
