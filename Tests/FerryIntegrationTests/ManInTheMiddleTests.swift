import FerryTestSupport
import Foundation
import Testing

extension IntegrationTests {
    /// A man in the middle with keys of its own (`MITMProxy`), between a real `ferry send` and a real
    /// `ferry receive` (issue 4, "Pairing and trust"): the two people see different pairing codes, a receiver that
    /// pinned the sender refuses the link, and no file is delivered. Each has a control without the proxy, so the
    /// test can fail.
    @Suite(.serialized) struct ManInTheMiddleTests {
        /// What each side showed of one attempt.
        struct Codes {
            var sender: String?
            var receiver: String?
            var senderStatus: Int32
            var receiverSawDevice: String?
        }

        /// `ferry send` to `port` while the receiver (`--accept ask`, stdin not a terminal) denies the offer; the
        /// sender's `connected` code and the receiver's (shown as soon as the link is up, before the offer).
        static func attempt(_ harness: TransferHarness, file: URL, receiver: FerryProcess, to port: Int)
            async throws -> Codes
        {
            let sender = try harness.sender([file.path], to: [port])
            let (status, lines, errors) = try await sender.finish()
            let connected = lines.compactMap(TransferHarness.json).first { $0["event"] as? String == "connected" }
            let linkUp = TransferHarness.json(try await receiver.nextEvent("connected"))
            #expect(connected != nil, "the sender reports its link: \(lines) \(errors)")
            return Codes(
                sender: connected?["code"] as? String, receiver: linkUp?["code"] as? String, senderStatus: status,
                receiverSawDevice: linkUp?["deviceID"] as? String)
        }

        @Test func throughAManInTheMiddleTheTwoSidesShowDifferentCodesAndNoFileArrives() async throws {
            let harness = try TransferHarness()
            let file = try harness.files.random("pairing.bin", size: 200_000, seed: 4)
            let (receiver, port) = try harness.receiver(accept: "ask")
            let codes = try await MITMProxy.with(targetPort: UInt16(port)) { proxy in
                let codes = try await Self.attempt(harness, file: file, receiver: receiver, to: Int(proxy.port))
                #expect(proxy.acceptedConnections >= 1 && proxy.rewrittenHellos >= 2, "the link went through it")
                #expect(codes.receiverSawDevice == proxy.deviceID.description, "the receiver saw the proxy's key")
                return codes
            }
            let sent = try #require(codes.sender, "the sender shows a code")
            let shown = try #require(codes.receiver, "the receiver shows a code")
            #expect(sent.count == 6 && shown.count == 6)
            #expect(sent != shown, "two TLS sessions give two codes")
            #expect(codes.senderStatus == 1, "the offer was denied")
            #expect(try await receiver.finish().status == 1)
            #expect(try TransferHarness.visibleFiles(in: harness.inbox.path).isEmpty, "no file delivered")
        }

        @Test func withoutAManInTheMiddleBothSidesShowTheSameCode() async throws {
            let harness = try TransferHarness()
            let file = try harness.files.random("pairing.bin", size: 200_000, seed: 4)
            let (receiver, port) = try harness.receiver(accept: "ask")
            let codes = try await Self.attempt(harness, file: file, receiver: receiver, to: port)
            let sent = try #require(codes.sender, "the sender shows a code")
            #expect(sent.count == 6)
            #expect(codes.receiver == sent, "one TLS session, one code")
            #expect(codes.receiverSawDevice != nil)
            #expect(codes.senderStatus == 1, "the offer was denied (no one to ask)")
            #expect(try TransferHarness.visibleFiles(in: harness.inbox.path).isEmpty)
        }

        @Test func aReceiverThatPinnedTheSenderRefusesAManInTheMiddleButNotTheSender() async throws {
            let harness = try TransferHarness()
            let file = try harness.files.random("pinned.bin", size: 300_000, seed: 5)
            let sender = try await harness.chat.deviceID(of: "outbox")
            try await harness.chat.trust(sender, as: "outbox", by: "inbox")
            let (receiver, port) = try harness.receiver(accept: "trusted")

            try await MITMProxy.with(targetPort: UInt16(port)) { proxy in
                let (status, lines, errors) = try await harness.sender([file.path], to: [Int(proxy.port)]).finish()
                #expect(status == 1, "refused through the proxy: \(lines) \(errors)")
                #expect(proxy.acceptedConnections >= 1, "the link went through it")
                let events = lines.compactMap(TransferHarness.json).compactMap { $0["event"] as? String }
                #expect(!events.contains("started") && !events.contains("finished"), "\(events)")
            }
            #expect(try TransferHarness.visibleFiles(in: harness.inbox.path).isEmpty, "nothing through the proxy")

            // The same receiver (still waiting, as nothing was offered) takes the same file from the real sender.
            let (status, lines, errors) = try await harness.sender([file.path], to: [port]).finish()
            #expect(status == 0, "the pinned sender itself is accepted: \(lines) \(errors)")
            #expect(try await receiver.finish().status == 0)
            let files = try TransferHarness.visibleFiles(in: harness.inbox.path)
            #expect(files == ["pinned.bin": 300_000])
        }
    }
}
