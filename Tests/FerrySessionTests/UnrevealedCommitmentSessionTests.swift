import FerrySecurity
import FerrySystem
import FerryTestSupport
import FerryWire
import Testing

@testable import FerrySession

/// Found by a peer written from the spec alone (issue 27): an acceptor whose hello carried 40 bytes after its display
/// name, meant as extension bytes, was read as committing to a pairing nonce it then never revealed; its `accept`
/// connected the link with no pairing code, and the transfer went ahead. In an acceptor's hello those bytes are the
/// commitment (PROTOCOL.md 4.1), and an `accept` that comes without their reveal fails the pairing (4.8).
@Suite(.serialized) struct UnrevealedCommitmentSessionTests {
    @Test(.timeLimit(.minutes(1)))
    func anAcceptorThatNeverRevealsItsCommitmentDoesNotConnect() async throws {
        let listener = try LoopbackSocket.listen(receiveTimeoutSeconds: 60)
        defer { listener.close() }
        try await withSession(SessionTests.configuration("alice")) { alice, _, _ in
            let dialling = Task {
                try await alice.connect(
                    toAddress: .ipv4(.loopback, port: listener.port), timeout: .seconds(20))
            }
            let stranger = try await StrangerLink.accept(on: listener)
            defer { stranger.close() }
            let hello = Hello(
                peerID: PeerID(rawValue: 0x5EED), deviceID: stranger.identity.deviceID, mode: .peer,
                capabilities: [.zlib, .transfers], listenPort: 0, datagramPort: 0, sessionID: "unit",
                displayName: "eve")
            let payload = SessionMessage.hello(hello).frame.payload + (0..<40).map { UInt8($0) }
            try await stranger.send(Frame(kind: .hello, payload: payload).encoded())

            // Alice answers the commitment she read with her nonce and her request; the stranger accepts at once,
            // revealing nothing.
            var decoder = FrameDecoder(maximumPayloadLength: Limits.maxFramePayload)
            var received: [SessionMessage] = []
            func readMore() async -> Bool {
                guard let bytes = try? await stranger.stream.read(maxBytes: 64 << 10), !bytes.isEmpty else {
                    return false
                }
                decoder.append(bytes)
                while let frame = try? decoder.nextFrame() {
                    if let message = try? SessionMessage(frame: frame) { received.append(message) }
                }
                return true
            }
            while !received.contains(.connectionRequest) {
                guard await readMore() else { break }
            }
            #expect(received.contains { if case .pairing = $0 { true } else { false } }, "\(received)")
            #expect(received.contains(.connectionRequest), "\(received)")
            try await stranger.send(SessionMessage.accept.encoded())
            while await readMore() {}

            let goodbyes = received.compactMap { message -> Goodbye? in
                if case .goodbye(let goodbye) = message { goodbye } else { nil }
            }
            #expect(goodbyes.map(\.reason) == [.protocolError], "\(received)")
            #expect(goodbyes.first?.detail.contains("commitment") == true, "\(goodbyes)")
            // Not connected, so no transfer can start on it (PROTOCOL.md 11.10 rule 1: transfer frames need `accept`).
            await #expect(throws: SessionError.self) { try await dialling.value }
            #expect(await alice.peers(withState: .connected).isEmpty)
        }
    }
}
