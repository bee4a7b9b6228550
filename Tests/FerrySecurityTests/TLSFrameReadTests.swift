import FerrySystem
import FerryWire
import Testing

@testable import FerrySecurity

/// `TLSStream.read(into:)`: frames decrypted straight into a `FrameDecoder`, and `write(blocks:)`.
@Suite("TLS frame reads", .timeLimit(.minutes(2)))
struct TLSFrameReadTests {
    /// Reads until `count` frames arrived; returns them and how many calls it took.
    static func readFrames(
        _ count: Int, from stream: TLSStream, _ decoder: inout FrameDecoder
    ) async throws -> (frames: [Frame], calls: Int) {
        var frames: [Frame] = []
        var calls = 0
        while frames.count < count {
            while let frame = try decoder.nextFrame() { frames.append(frame) }
            guard frames.count < count else { break }
            let (read, byteCount) = try await stream.read(into: &decoder)
            calls += 1
            try #require(byteCount > 0, "the stream ended after \(frames.count) frames")
            frames += read
        }
        return (frames, calls)
    }

    /// Runs both handshakes, so that a write does not wait for a reader that has not started.
    static func connect(_ pair: TLSPair) async throws {
        async let server = pair.server.handshake()
        try await pair.client.handshake()
        try await server
    }

    static func payload(_ count: Int, seed: Int) -> [UInt8] {
        (0..<count).map { UInt8(truncatingIfNeeded: $0 &* 31 &+ seed &+ $0 >> 11) }
    }

    /// Frames from empty to above 1 MiB, most larger than one TLS record (16 KiB), written as header and payload
    /// blocks (as chunks are) or as one array, arrive whole and in order.
    @Test func framesLargerThanOneRecordArriveWhole() async throws {
        try await withTLSPair { pair, _ in
            let sizes = [0, 1, 16_378, 16_384, 16_385, 100_000, (1 << 20) + 3, 70_000, 5]
            let frames = sizes.enumerated().map { index, size in
                Frame(kind: .chunk, payload: Self.payload(size, seed: index))
            }
            let writer = Task {
                for (index, frame) in frames.enumerated() {
                    if index.isMultiple(of: 2) {
                        let header = Array(frame.encoded().prefix(Frame.headerLength))
                        try await pair.client.write(blocks: [header, frame.payload])
                    } else {
                        try await pair.client.write(frame.encoded())
                    }
                }
            }
            var decoder = FrameDecoder(maximumPayloadLength: Limits.maxFramePayload)
            let (received, _) = try await Self.readFrames(frames.count, from: pair.server, &decoder)
            try await writer.value
            #expect(received.count == frames.count)
            for (got, sent) in zip(received, frames) {
                #expect(got.kind == sent.kind && got.payload.count == sent.payload.count)
                #expect(got.payload == sent.payload, "payload of \(sent.payload.count) bytes")
            }
            #expect(decoder.bufferedByteCount == 0)
        }
    }

    /// Many small frames written at once come out of few reads: a read takes everything that was decrypted, not
    /// one frame a call.
    @Test func manyFramesInOneReadComeOutTogether() async throws {
        try await withTLSPair { pair, _ in
            let frames = (0..<2000).map { Frame(kind: .message, payload: Self.payload($0 % 13, seed: $0)) }
            try await Self.connect(pair)
            try await pair.client.write(frames.flatMap { $0.encoded() })
            var decoder = FrameDecoder(maximumPayloadLength: Limits.maxFramePayload)
            let (received, calls) = try await Self.readFrames(frames.count, from: pair.server, &decoder)
            #expect(received == frames)
            // About 30 KB: two TLS records, so a handful of reads; one frame a read would take 2000.
            #expect(calls < frames.count / 10, "\(calls) reads for \(frames.count) frames")
        }
    }

    /// Three frames split in two TLS writes at every byte boundary, the second written only after the reader got
    /// the first part: every split lands between two reads, inside a header or a payload.
    @Test func aFrameSplitAcrossReadsAtEveryByteBoundary() async throws {
        try await withTLSPair { pair, _ in
            let frames = [
                Frame(kind: .message, payload: Self.payload(40, seed: 1)),
                Frame(kind: .chunk, payload: Self.payload(300, seed: 2)),
                Frame(kind: .accept, payload: []),
            ]
            let stream = frames.flatMap { $0.encoded() }
            var decoder = FrameDecoder(maximumPayloadLength: Limits.maxFramePayload)
            try await Self.connect(pair)
            for boundary in 1..<stream.count {
                try await pair.client.write(Array(stream[..<boundary]))
                var received: [Frame] = []
                var taken = 0
                while taken < boundary {
                    while let frame = try decoder.nextFrame() { received.append(frame) }
                    let (read, byteCount) = try await pair.server.read(into: &decoder)
                    try #require(byteCount > 0)
                    taken += byteCount
                    received += read
                }
                #expect(taken == boundary, "a read took bytes that were not sent yet")
                try await pair.client.write(Array(stream[boundary...]))
                let (rest, _) = try await Self.readFrames(frames.count - received.count, from: pair.server, &decoder)
                #expect(received + rest == frames, "split at \(boundary)")
                #expect(decoder.bufferedByteCount == 0)
            }
        }
    }
}
