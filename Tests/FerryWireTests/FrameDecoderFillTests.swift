import FerryTestSupport
import Testing

@testable import FerryWire

/// `FrameDecoder.fill`: the stream written in place, the way `TLSStream.read(into:)` decrypts it, with each
/// payload written once into the array the frame keeps.
@Suite("FrameDecoder fill")
struct FrameDecoderFillTests {
    /// Three frames (small, larger, empty) split in two at every byte boundary, through `fill`, through `append`,
    /// and the first part appended and the rest filled: always the same frames, nothing left over.
    @Test func aStreamSplitAtEveryByteBoundaryDecodesAlike() throws {
        let frames = [
            Frame(kind: .message, payload: Array(0..<20)),
            Frame(kind: .chunk, payload: (0..<300).map { UInt8(truncatingIfNeeded: $0 &* 7) }),
            Frame(kind: .accept, payload: []),
        ]
        let stream = frames.flatMap { $0.encoded() }
        for boundary in 1..<stream.count {
            let sizes = [boundary, stream.count - boundary]
            let filled = try DecoderVerifier.fill(stream, in: sizes)
            #expect(filled.frames == frames, "split at \(boundary)")
            #expect(filled.buffered == 0)
            var decoder = FrameDecoder(maximumPayloadLength: Limits.maxFramePayload)
            var decoded: [Frame] = []
            decoder.append(stream[..<boundary])
            while let frame = try decoder.nextFrame() { decoded.append(frame) }
            var offset = boundary
            while offset < stream.count {
                let written = decoder.fill { space in
                    let count = min(space.count, stream.count - offset)
                    stream[offset..<(offset + count)].withUnsafeBytes { space.copyMemory(from: $0) }
                    return count
                }
                offset += written
                while let frame = try decoder.nextFrame() { decoded.append(frame) }
            }
            #expect(decoded == frames, "appended up to \(boundary), filled after")
            #expect(decoder.bufferedByteCount == 0)
        }
    }

    /// A fill offers the rest of the header, then exactly the payload's unfilled rest, and the frame returned keeps
    /// the very array that was filled: the payload is never copied after it was written.
    @Test func aFilledPayloadIsTheArrayTheFrameKeeps() throws {
        let payload = (0..<100_000).map { UInt8(truncatingIfNeeded: $0 &* 13 &+ 5) }
        let stream = Frame(kind: .chunk, payload: payload).encoded()
        var decoder = FrameDecoder(maximumPayloadLength: Limits.maxFramePayload)
        #expect(decoder.fillableByteCount == Frame.headerLength)
        var offset = 0
        var payloadAddresses: Set<UnsafeMutableRawPointer> = []
        var offers: [Int] = []
        var frame: Frame?
        while frame == nil {
            offers.append(decoder.fillableByteCount)
            let written = decoder.fill { space in
                if offset >= Frame.headerLength, let base = space.baseAddress {
                    payloadAddresses.insert(base - (offset - Frame.headerLength))
                }
                let count = min(space.count, 7_000)  // a few TLS records at a time
                stream[offset..<(offset + count)].withUnsafeBytes { space.copyMemory(from: $0) }
                return count
            }
            offset += written
            frame = try decoder.nextFrame()
        }
        // The header first, then exactly what the payload still misses.
        #expect(offers == [Frame.headerLength] + stride(from: payload.count, to: 0, by: -7_000).map { $0 })
        let decoded = try #require(frame)
        #expect(decoded.payload == payload)
        #expect(payloadAddresses.count == 1, "every fill wrote into one payload array")
        let kept = decoded.payload.withUnsafeBytes { UnsafeMutableRawPointer(mutating: $0.baseAddress) }
        #expect(payloadAddresses.first == kept, "the frame keeps the array that was filled")
        #expect(decoder.bufferedByteCount == 0)
        #expect(decoder.fillableByteCount == Frame.headerLength)
    }

    /// The payload of a frame whose header came in an `append` with only part of its payload gets its own array;
    /// the rest of an `append` goes straight there, and takeBufferedBytes gives back header and part in order.
    @Test func aPartialPayloadIsCountedAndGivenBackInOrder() throws {
        let frame = Frame(kind: .message, payload: Array(repeating: 9, count: 500))
        let bytes = frame.encoded()
        var decoder = FrameDecoder(maximumPayloadLength: Limits.maxFramePayload)
        decoder.append(bytes[..<100])
        #expect(try decoder.nextFrame() == nil)
        #expect(decoder.bufferedByteCount == 100)
        #expect(decoder.fillableByteCount == bytes.count - 100)
        decoder.append(bytes[100..<300])
        #expect(try decoder.nextFrame() == nil)
        #expect(decoder.bufferedByteCount == 300)
        let heartbeat = try Fixtures.bytes("heartbeat")
        var copy = decoder
        copy.append(bytes[300...] + heartbeat)
        #expect(try copy.nextFrame() == frame)
        #expect(try copy.nextFrame().map(SessionMessage.init(frame:)) == .heartbeat(Samples.heartbeat))
        #expect(copy.bufferedByteCount == 0)
        #expect(decoder.takeBufferedBytes() == Array(bytes[..<300]))
        #expect(decoder.bufferedByteCount == 0)
        #expect(decoder.fillableByteCount == Frame.headerLength)
    }

    /// A header above the limit is refused by `nextFrame` before anything is allocated; `fill` then offers nothing
    /// (the stream is stuck there) until the limit is raised, and the frame then arrives intact.
    @Test func aHeaderAboveTheLimitStopsFillingUntilTheLimitIsRaised() throws {
        let big = Frame(kind: .message, payload: Array(repeating: 3, count: 5_000))
        let stream = try Fixtures.bytes("hello") + big.encoded()  // the hello, then a frame only a peer accepted may send
        var decoder = FrameDecoder()
        var offset = 0
        var frames: [Frame] = []
        var refused: WireError?
        while refused == nil {
            let written = decoder.fill { space in
                let count = min(space.count, stream.count - offset)
                stream[offset..<(offset + count)].withUnsafeBytes { space.copyMemory(from: $0) }
                return count
            }
            offset += written
            do throws(WireError) {
                while let frame = try decoder.nextFrame() { frames.append(frame) }
            } catch {
                refused = error
            }
        }
        #expect(refused == .frameTooLarge(length: 5_000, limit: Limits.maxHelloPayload))
        #expect(frames.map(\.kind) == [.hello])
        #expect(decoder.fillableByteCount == 0)
        #expect(
            decoder.fill { _ in
                Issue.record("offered room while refusing"); return 0
            } == 0)
        decoder.maximumPayloadLength = Limits.maxFramePayload
        #expect(try decoder.nextFrame() == nil)  // the header passes now; its payload is still to come
        #expect(decoder.fillableByteCount == big.payload.count)  // fills never read past the refused header
        #expect(offset == stream.count - big.payload.count)
        while offset < stream.count {
            let written = decoder.fill { space in
                let count = min(space.count, stream.count - offset)
                stream[offset..<(offset + count)].withUnsafeBytes { space.copyMemory(from: $0) }
                return count
            }
            try #require(written > 0)
            offset += written
            while let frame = try decoder.nextFrame() { frames.append(frame) }
        }
        #expect(frames.last == big)
        #expect(offset == stream.count)
    }

    /// Many frames in random splits, appended and filled in turn, with partial frames left over between reads.
    @Test func appendAndFillMixedInALongStream() throws {
        var generator = SplitMix64(seed: 11)
        var stream: [UInt8] = []
        var expected: [Frame] = []
        for index in 0..<2000 {
            let count = Int.random(in: 0...5000, using: &generator)
            let frame = Frame(kind: .message, payload: Array(repeating: UInt8(truncatingIfNeeded: index), count: count))
            expected.append(frame)
            frame.encode(into: &stream)
        }
        var decoder = FrameDecoder(maximumPayloadLength: Limits.maxFramePayload)
        var received: [Frame] = []
        var offset = 0
        while offset < stream.count {
            let size = min(stream.count - offset, Int.random(in: 1...9000, using: &generator))
            if Bool.random(using: &generator) {
                decoder.append(stream[offset..<(offset + size)])
                offset += size
            } else {
                let written = decoder.fill { space in
                    let count = min(space.count, size)
                    stream[offset..<(offset + count)].withUnsafeBytes { space.copyMemory(from: $0) }
                    return count
                }
                offset += written
            }
            while let frame = try decoder.nextFrame() { received.append(frame) }
        }
        #expect(received == expected)
        #expect(decoder.bufferedByteCount == 0)
    }
}
