import FerrySession
import FerrySystem
import FerryTestSupport
import FerryWire
import Foundation
import Testing

@testable import FerryTransfer

/// Broadcast isolation (promise 9): one receiver of a broadcast that misbehaves fails alone; the honest one gets
/// every byte. (A receiver that black-holes is `TransferBroadcastTests.aStalledReceiverFailsAloneWhileTheOthersFinish`.)
@Suite(.serialized, .timeLimit(.minutes(2))) struct BroadcastIsolationTests {
    /// What mallory does once it has accepted the offer.
    enum Misbehaviour: String, CaseIterable, Sendable {
        /// Calls the first chunk corrupt every time it comes, discarding later ones as an honest go-back-N receiver
        /// does: without a cap the sender would resend it for ever and the broadcast would never end.
        case corruptAckStorm
        /// A transfer frame whose payload does not decode.
        case garbage
        /// Acknowledges a chunk that was never sent.
        case ackForAChunkNeverSent
    }

    /// Plays the hostile receiver: accepts the first offer, then misbehaves until its link is closed.
    static func misbehave(_ mallory: Session, _ how: Misbehaviour) async throws {
        var transferID: TransferID?
        for await event in mallory.transferEvents {
            guard case .frame(let frame, let sender) = event, let message = try? TransferMessage(frame: frame) else {
                if case .peerDisconnected = event { return }
                continue
            }
            switch message {
            case .offer(let offer):
                transferID = offer.transferID
                let reply = OfferReply.accepting(
                    offer.transferID, codecs: offer.codecs,
                    files: offer.files.map { _ in FileDecision(accepted: true, resumeOffset: 0) })
                try await mallory.sendTransferFrame([TransferMessage.offerReply(reply).frame.encoded()], to: sender)
            case .chunk(let chunk) where chunk.transferID == transferID:
                let frame: [UInt8]
                switch how {
                case .corruptAckStorm:
                    guard chunk.fileIndex == 0, chunk.offset == 0 else { continue }
                    let ack = ChunkAck(
                        transferID: chunk.transferID, fileIndex: chunk.fileIndex, offset: chunk.offset, status: .corrupt
                    )
                    frame = TransferMessage.chunkAck(ack).frame.encoded()
                case .garbage:
                    frame = [0x01, 0x03, 0, 0, 0, 3, 0xDE, 0xAD, 0xBE]  // a chunkAck of 3 bytes: too short to decode
                case .ackForAChunkNeverSent:
                    let ack = ChunkAck(
                        transferID: chunk.transferID, fileIndex: chunk.fileIndex, offset: chunk.offset + (1 << 40),
                        status: .stored)
                    frame = TransferMessage.chunkAck(ack).frame.encoded()
                }
                // The sender may close the link at any moment now: a failed send ends the act.
                guard (try? await mallory.sendTransferFrame([frame], to: sender)) != nil else { return }
            default:
                continue
            }
        }
    }

    @Test(arguments: Misbehaviour.allCases)
    func aMisbehavingReceiverFailsAloneAndTheOtherGetsTheFile(_ how: Misbehaviour) async throws {
        try await TemporaryDirectory.with(prefix: "engine-src") { source in
            try await TemporaryDirectory.with(prefix: "engine-in") { inbox in
                let url = try TestFiles(in: source).random("fan.bin", size: 3 << 20, seed: 5)
                let reactor = try Reactor()
                defer { reactor.shutdown() }
                let configuration = TransferEngineTests.configuration
                try await Session.run(configuration: configuration("bob"), reactor: reactor) { bob in
                    try await Session.run(configuration: configuration("mallory"), reactor: reactor) { mallory in
                        try await Session.run(configuration: configuration("alice"), reactor: reactor) { alice in
                            let receiving = TransferConfiguration(receiveDirectory: inbox.path, offerPolicy: .all)
                            let sending = TransferConfiguration(chunkSize: Limits.minChunkSize, compression: .none)
                            try await TransferEngine.run(session: bob, configuration: receiving) { _ in
                                try await TransferEngine.run(session: alice, configuration: sending) { sender in
                                    let honest = try await alice.connect(
                                        toAddress: .ipv4(.loopback, port: await bob.listenPort), timeout: .seconds(30))
                                    let hostile = try await alice.connect(
                                        toAddress: .ipv4(.loopback, port: await mallory.listenPort),
                                        timeout: .seconds(30))
                                    let act = Task { try await Self.misbehave(mallory, how) }
                                    defer { act.cancel() }
                                    let outcomes = try await sender.send(
                                        [SourceFile(path: url.path, name: "fan.bin")],
                                        to: [honest.peerID, hostile.peerID])
                                    let byPeer = Dictionary(uniqueKeysWithValues: outcomes.map { ($0.peer.peerID, $0) })
                                    #expect(byPeer[honest.peerID]?.isSuccess == true, "\(outcomes)")
                                    #expect(byPeer[hostile.peerID]?.isSuccess == false, "\(outcomes)")
                                }
                            }
                        }
                    }
                }
                #expect(
                    try TestFiles.sha256(ofFile: URL(fileURLWithPath: inbox.path + "/fan.bin"))
                        == TestFiles.sha256(ofFile: url))
            }
        }
    }
}
