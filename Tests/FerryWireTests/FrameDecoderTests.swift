import FerryTestSupport
import Testing

@testable import FerryWire

@Suite("FrameDecoder")
struct FrameDecoderTests {
    @Test(arguments: Samples.frameCases)
    func eachGoldenFrameInEverySplit(_ golden: FrameCase) throws {
        let bytes = try golden.bytes()
        var whole = FrameDecoder()
        whole.append(bytes)
        let frame = try #require(try whole.nextFrame())
        try DecoderVerifier.verify(stream: bytes, expected: [frame])
        try DecoderVerifier.verifyPrefixesNeedMore(of: bytes)
    }

    @Test func allGoldenFramesConcatenated() throws {
        var stream: [UInt8] = []
        var expected: [Frame] = []
        for golden in Samples.frameCases {
            let bytes = try golden.bytes()
            var decoder = FrameDecoder()
            decoder.append(bytes)
            expected.append(try #require(try decoder.nextFrame()))
            stream += bytes
        }
        try DecoderVerifier.verify(stream: stream, expected: expected)
        try DecoderVerifier.verify(stream: stream + stream, expected: expected + expected)
    }

    @Test func hostileLengthThrowsAsSoonAsTheHeaderIsSeen() {
        var decoder = FrameDecoder()
        decoder.append([0x00, 0x05, 0xFF, 0xFF, 0xFF])
        #expect(throws: Never.self) { try decoder.nextFrame() }
        decoder.append([0xFF])
        #expect(throws: WireError.frameTooLarge(length: 0xFFFF_FFFF, limit: Limits.maxHelloPayload)) {
            try decoder.nextFrame()
        }
        // Nothing beyond the header was buffered, and the error repeats: the stream cannot resynchronise.
        #expect(decoder.bufferedByteCount == Frame.headerLength)
        #expect(throws: WireError.self) { try decoder.nextFrame() }
    }

    @Test func hostileLengthAfterHelloLimit() {
        var decoder = FrameDecoder(maximumPayloadLength: Limits.maxFramePayload)
        decoder.append([0x80, 0x01, 0xFF, 0xFF, 0xFF, 0xFF])
        #expect(throws: WireError.frameTooLarge(length: 0xFFFF_FFFF, limit: Limits.maxFramePayload)) {
            try decoder.nextFrame()
        }
    }

    @Test func limitIsInclusive() throws {
        var decoder = FrameDecoder()
        decoder.append(Frame(kind: .message, payload: Array(repeating: 7, count: 1024)).encoded())
        #expect(try decoder.nextFrame()?.payload.count == 1024)
        decoder.append(Frame(kind: .message, payload: Array(repeating: 7, count: 1025)).encoded())
        #expect(throws: WireError.frameTooLarge(length: 1025, limit: 1024)) { try decoder.nextFrame() }
    }

    @Test func raisingTheLimitAfterHello() throws {
        let big = Frame(kind: .message, payload: Array(repeating: 1, count: 100_000))
        var decoder = FrameDecoder()
        decoder.append(try Fixtures.bytes("hello") + big.encoded())
        #expect(try decoder.nextFrame()?.kind == .hello)
        decoder.maximumPayloadLength = Limits.maxFramePayload
        #expect(try decoder.nextFrame() == big)
    }

    @Test func emptyPayloadFrames() throws {
        var decoder = FrameDecoder()
        decoder.append(try Fixtures.bytes("accept") + (try Fixtures.bytes("accept")))
        #expect(try decoder.nextFrame() == Frame(kind: .accept, payload: []))
        #expect(try decoder.nextFrame() == Frame(kind: .accept, payload: []))
        #expect(try decoder.nextFrame() == nil)
    }

    @Test func takeBufferedBytesReturnsLeftovers() throws {
        var decoder = FrameDecoder()
        let heartbeat = try Fixtures.bytes("heartbeat")
        decoder.append(heartbeat + heartbeat.prefix(5))
        #expect(try decoder.nextFrame() != nil)
        #expect(decoder.bufferedByteCount == 5)
        #expect(decoder.takeBufferedBytes() == Array(heartbeat.prefix(5)))
        #expect(decoder.bufferedByteCount == 0)
        #expect(try decoder.nextFrame() == nil)
        decoder.append(heartbeat)
        #expect(try decoder.nextFrame().map(SessionMessage.init(frame:)) == .heartbeat(Samples.heartbeat))
    }

    /// Many frames through one decoder with partial frames left over between reads, so the read index and
    /// compaction paths are exercised; every frame must come out intact and in order.
    @Test func longStreamWithLeftoversStaysCorrect() throws {
        var generator = SplitMix64(seed: 42)
        var stream: [UInt8] = []
        var expected: [Frame] = []
        for index in 0..<3000 {
            let count = Int.random(in: 0...3000, using: &generator)
            let frame = Frame(kind: .message, payload: Array(repeating: UInt8(truncatingIfNeeded: index), count: count))
            expected.append(frame)
            frame.encode(into: &stream)
        }
        var decoder = FrameDecoder(maximumPayloadLength: Limits.maxFramePayload)
        var received = 0
        var offset = 0
        while offset < stream.count {
            let size = min(stream.count - offset, Int.random(in: 1...9000, using: &generator))
            decoder.append(stream[offset..<(offset + size)])
            offset += size
            while let frame = try decoder.nextFrame() {
                #expect(frame == expected[received])
                received += 1
            }
        }
        #expect(received == expected.count)
        #expect(decoder.bufferedByteCount == 0)
    }
}
