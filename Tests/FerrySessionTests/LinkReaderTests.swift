import FerrySecurity
import FerrySystem
import FerryTestSupport
import FerryWire
import Testing

@testable import FerrySession

/// `LinkReader`: frames decoded as they are decrypted, with the link machine's limit as the session hands it back.
@Suite(.timeLimit(.minutes(2))) struct LinkReaderTests {
    /// A TLS client and server over loopback TCP.
    static func withLink(_ body: (_ client: TLSStream, _ server: TLSStream) async throws -> Void) async throws {
        let reactor = try Reactor()
        defer { reactor.shutdown() }
        let listener = try reactor.listenTCP(on: .ipv4(.loopback, port: 0))
        defer { listener.close() }
        async let accepted = listener.accept()
        let clientTCP = try await reactor.connectTCP(to: listener.localAddress, timeout: .seconds(60))
        let serverTCP = try await accepted
        let client = try TLSStream(
            over: clientTCP, context: TLSContext(identity: TestIdentity.named("client")), role: .client)
        let server = try TLSStream(
            over: serverTCP, context: TLSContext(identity: TestIdentity.named("server")), role: .server)
        defer {
            client.close()
            server.close()
        }
        // Both handshakes first: a write waits for its own, which needs the peer to read.
        async let serverPeer = server.handshake()
        try await client.handshake()
        try await serverPeer
        try await body(client, server)
    }

    /// A small frame and a frame above the 1 KiB pre-acceptance limit arrive in one write. The small one is
    /// delivered first; the large one only once the session raised the limit (as the `accept` the small one stands
    /// for would), and refused when the limit stays.
    @Test func aHeaderAboveTheLimitWaitsForTheFramesBeforeItAndIsRefusedOnlyIfTheLimitStays() async throws {
        let small = Frame(kind: .message, payload: Array(repeating: 1, count: 100))
        let large = Frame(kind: .message, payload: Array(repeating: 2, count: 50_000))
        for raise in [true, false] {
            try await Self.withLink { client, server in
                try await client.write(small.encoded() + large.encoded())
                var reader = LinkReader(stream: server)
                var frames: [Frame] = []
                var refused: WireError?
                while frames.count < 2, refused == nil {
                    switch try await reader.next() {
                    case .frames(let got): frames += got
                    case .refused(let error): refused = error
                    case .drained, .end:
                        Issue.record("the stream ended")
                        return
                    }
                    // The session raises the limit when the first frame (an `accept`, say) is handled.
                    let limit = raise && !frames.isEmpty ? Limits.maxFramePayload : Limits.maxHelloPayload
                    let goesOn = reader.apply(.frames(maximumPayloadLength: limit))
                    #expect(goesOn)
                }
                if raise {
                    #expect(frames == [small, large])
                    #expect(refused == nil)
                } else {
                    #expect(frames == [small])
                    #expect(refused == .frameTooLarge(length: 50_000, limit: Limits.maxHelloPayload))
                }
            }
        }
    }

    /// A closed link is drained as bytes, and the end of the stream ends the reader.
    @Test func aDrainingReaderDropsBytesUntilTheEnd() async throws {
        try await Self.withLink { client, server in
            var reader = LinkReader(stream: server)
            try await client.write(Frame(kind: .message, payload: [1, 2, 3]).encoded())
            guard case .frames(let frames) = try await reader.next() else {
                Issue.record("expected a frame")
                return
            }
            #expect(frames.count == 1)
            let drains = reader.apply(.drain)
            #expect(drains)
            try await client.write(Array(repeating: 0xFF, count: 10_000))  // not frames: never decoded
            var drained = 0
            while case .drained = try await reader.next() {
                drained += 1
                if drained == 1 { await client.finishWriting() }
            }
            #expect(drained >= 1)
            let goesOn = reader.apply(.stop)
            #expect(!goesOn)
        }
    }
}
