import FerrySession
import FerrySystem
import FerryTestSupport
import FerryWire
import Foundation
import Testing

@testable import FerryTransfer

/// A receiver that lets in trusted peers only (`ferry receive --accept trusted`, a service) cuts a device off the
/// moment its pin is removed: its links end with a goodbye that says why, nothing more it offers is accepted, and a
/// transfer it had going is cancelled with its staged data kept for a resume, all without a restart.
@Suite(.serialized, .timeLimit(.minutes(2))) struct TrustRemovalTests {
    /// Runs `body` with "mallory", pinned by a receiving engine on `inbox` whose session lets in trusted peers only,
    /// and answers every offer of a connected peer (as `ferry receive --accept trusted` does: the session decides
    /// who may connect).
    static func withPinnedSender(
        inbox: String,
        _ body: (_ sender: HostileSender, _ receiver: Session, _ mallory: DeviceID) async throws -> Void
    ) async throws {
        let reactor = try Reactor()
        defer { reactor.shutdown() }
        let mallory = TransferEngineTests.configuration("mallory")
        var bob = TransferEngineTests.configuration("bob")
        bob.acceptPolicy = .trusted
        bob.trustedDevices = [mallory.deviceID: "mallory"]
        try await Session.run(configuration: bob, reactor: reactor) { bob in
            try await Session.run(configuration: mallory, reactor: reactor) { session in
                let receiving = TransferConfiguration(receiveDirectory: inbox, offerPolicy: .all)
                try await TransferEngine.run(session: bob, configuration: receiving) { _ in
                    let info = try await session.connect(
                        toAddress: .ipv4(.loopback, port: await bob.listenPort), timeout: .seconds(30))
                    try await body(HostileSender(session: session, receiver: info.peerID), bob, mallory.deviceID)
                }
            }
        }
    }

    /// The transfer messages `peer` sends until its link closes, and the reason the session gave for the close (nil
    /// when it did not close within a minute).
    static func messagesUntilClosed(_ session: Session, from peer: PeerID) async -> ([TransferMessage], String?) {
        let events = session.transferEvents
        return await withTaskGroup(of: ([TransferMessage], String?).self) { group in
            group.addTask {
                var messages: [TransferMessage] = []
                for await event in events {
                    switch event {
                    case .frame(let frame, let from) where from == peer:
                        if let message = try? TransferMessage(frame: frame) { messages.append(message) }
                    case .peerDisconnected(let from, let reason) where from == peer:
                        return (messages, reason)
                    default:
                        continue
                    }
                }
                return (messages, nil)
            }
            group.addTask {
                try? await Task.sleep(for: .seconds(60))
                return ([], nil)
            }
            let first = await group.next() ?? ([], nil)
            group.cancelAll()
            return first
        }
    }

    static func visible(_ inbox: String) throws -> [String] {
        try FileManager.default.contentsOfDirectory(atPath: inbox).filter { $0 != ".ferry-staging" }.sorted()
    }

    @Test func aRemovedDeviceIsCutOffAndItsNextOfferOnTheOpenLinkIsNotAccepted() async throws {
        try await TemporaryDirectory.with(prefix: "trust-removed") { inbox in
            try await Self.withPinnedSender(inbox: inbox.path) { sender, receiver, mallory in
                let first = try await sender.sendWhole("first.txt", Array("pinned\n".utf8), chunkSize: 65536)
                #expect(first?.status == .published)

                await receiver.untrust(mallory)
                // The link mallory still holds open: a second offer on it.
                let second = HostileSender(session: sender.session, receiver: sender.receiver)
                let bytes = Array("removed\n".utf8)
                try? await second.send(.offer(second.offer([("second.txt", UInt64(bytes.count))])))
                try? await second.sendChunk(file: 0, offset: 0, raw: bytes)
                try? await second.sendEnd(file: 0, of: bytes)
                let (messages, closedBy) = await Self.messagesUntilClosed(sender.session, from: sender.receiver)
                for message in messages {
                    switch message {
                    case .offerReply(let reply):
                        #expect(!reply.accepted, "an offer from a removed device was accepted")
                    case .fileResult(let result):
                        Issue.record("a file from a removed device got a result: \(result)")
                    default:
                        continue
                    }
                }
                #expect(closedBy?.contains("no longer trusted") == true, "\(closedBy ?? "nil")")
                #expect(await receiver.peers(withState: .connected).isEmpty)
            }
            #expect(try Self.visible(inbox.path) == ["first.txt"])
        }
    }

    @Test func aTransferInProgressFromARemovedDeviceIsCancelledItsStagedDataKept() async throws {
        try await TemporaryDirectory.with(prefix: "trust-removed") { inbox in
            let chunk = Limits.minChunkSize
            let bytes = (0..<(2 * chunk)).map { UInt8(truncatingIfNeeded: $0 &* 13 &+ 1) }
            try await Self.withPinnedSender(inbox: inbox.path) { sender, receiver, mallory in
                try await sender.send(.offer(sender.offer([("big.bin", UInt64(bytes.count))])))
                #expect(try #require(await sender.reply()).accepted)
                try await sender.sendChunk(file: 0, offset: 0, raw: Array(bytes[..<chunk]))
                #expect(await sender.ack() != nil, "the first chunk is written")

                await receiver.untrust(mallory)
                #expect(await sender.linkClosed(), "the removed device's link is closed")
            }
            #expect(try Self.visible(inbox.path) == [])
            let staging = inbox.path + "/.ferry-staging"
            let staged = try FileManager.default.contentsOfDirectory(atPath: staging)
            #expect(staged.count == 1, "\(staged)")
            let size = try staged.first.map {
                try FileManager.default.attributesOfItem(atPath: staging + "/" + $0)[.size] as? Int
            }
            #expect(size == chunk, "the chunk written stays staged for a resume")
        }
    }

    /// A name pinned to another key while a device showing that name is connected (with `--accept all`, where the
    /// pin was not what let it in): the link is closed, as a new link showing that name would be refused.
    @Test func aDeviceShowingANameJustPinnedToAnotherKeyIsCutOff() async throws {
        try await TemporaryDirectory.with(prefix: "trust-renamed") { inbox in
            try await TransferHostilePeerTests.withMallory(inbox: inbox.path, policy: .all) { mallory, bob, engine in
                let receiver = await engine.session
                let sender = HostileSender(session: mallory, receiver: bob)
                await receiver.trust(TestIdentity.named("the-real-mallory").deviceID, name: "Mallory")
                let (_, closedBy) = await Self.messagesUntilClosed(sender.session, from: sender.receiver)
                #expect(closedBy?.contains("now pinned to another key") == true, "\(closedBy ?? "nil")")
            }
        }
    }
}
