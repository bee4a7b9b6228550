import FerrySecurity
import FerryTestSupport
import FerryWire
import Foundation
import Testing

/// Issue 27, as the peer written from the spec alone met it: `ferry send --json` to an acceptor whose hello carries
/// 40 bytes after its name (meant as extension, read as a pairing commitment) and that accepts without revealing a
/// nonce. Before the fix the link connected with `"code": null` and the transfer went ahead; now the pairing fails:
/// no `connected` event, no offer on the wire, exit 1.
extension IntegrationTests {
    @Suite(.serialized) struct UnrevealedCommitmentProcessTests {
        @Test(.timeLimit(.minutes(2)))
        func aSendToAnAcceptorThatNeverRevealsItsCommitmentSendsNothing() async throws {
            let harness = try TransferHarness()
            let file = try harness.files.random("secret.bin", size: 10_000)
            let listener = try LoopbackSocket.listen(receiveTimeoutSeconds: 60)
            defer { listener.close() }
            let sender = try harness.sender([file.path], to: [Int(listener.port)])
            let identity = try DeviceIdentity.generate()
            let hello = Hello(
                peerID: PeerID(rawValue: 0x5EED), deviceID: identity.deviceID, mode: .peer,
                capabilities: [.zlib, .transfers, .filesOnly], listenPort: listener.port, datagramPort: 0,
                sessionID: harness.session, displayName: "eve")
            let helloFrame = Frame(
                kind: .hello, payload: SessionMessage.hello(hello).frame.payload + (0..<40).map { UInt8($0) })

            // The sender may probe the address first (a link that ends with its goodbye), then connect.
            var seen: [SessionMessage] = []
            var requested = false
            for _ in 0..<3 where !requested {
                let link = try await StrangerLink.accept(on: listener, identity: identity)
                defer { link.close() }
                try await link.send(helloFrame.encoded())
                var decoder = FrameDecoder(maximumPayloadLength: Limits.maxFramePayload)
                reading: while true {
                    guard let bytes = try? await link.stream.read(maxBytes: 64 << 10), !bytes.isEmpty else { break }
                    decoder.append(bytes)
                    while let frame = try? decoder.nextFrame() {
                        guard let message = try? SessionMessage(frame: frame) else { continue }
                        seen.append(message)
                        if message == .connectionRequest, !requested {
                            requested = true
                            try await link.send(SessionMessage.accept.encoded())  // and no reveal
                        }
                        if case .goodbye = message { break reading }
                    }
                }
            }
            #expect(requested, "the sender never asked to connect: \(seen)")
            #expect(seen.contains { if case .pairing = $0 { true } else { false } }, "its nonce went out: \(seen)")
            #expect(!seen.contains { if case .transfer = $0 { true } else { false } }, "no offer: \(seen)")
            let goodbye = seen.last { if case .goodbye = $0 { true } else { false } }
            guard case .goodbye(let last)? = goodbye else {
                Issue.record("no goodbye: \(seen)")
                return
            }
            #expect(last.reason == .protocolError && last.detail.contains("commitment"), "\(last)")
            let status = try sender.waitForExit(timeout: .seconds(60))
            #expect(status == 1, "\(sender.allStdoutLines)")
            let events = sender.allStdoutLines.compactMap(TransferHarness.json).compactMap { $0["event"] as? String }
            #expect(!events.contains("connected") && !events.contains("started"), "\(events)")
        }
    }
}
