import FerrySession
import FerrySystem
import FerryTestSupport
import FerryWire
import Foundation
import Testing

@testable import FerryTransfer

extension TransferEngine {
    /// Hands `offer` to the engine as if it had just arrived from `peer`, and answers it the moment the
    /// `offerReceived` event is out, before any other task gets onto the engine: the earliest an application can
    /// answer (a trusted peer accepted, a prompt refused without asking).
    func receiveAndAnswerAtOnce(_ offer: Offer, from peer: PeerID, accept: Bool) async {
        await offerReceived(offer, from: peer)
        respond(to: offer.transferID, from: peer, accept: accept)
    }
}

/// An answer to an asked offer is never lost, however early it comes (issue 9, section 5: a trusted peer's
/// immediate accept waited for the 60 s ask timeout, because it came before the waiter existed).
@Suite(.serialized, .timeLimit(.minutes(2))) struct OfferAnswerTests {
    /// Much longer than any bound below, so that an answer lost shows as a reply that does not come.
    static let askTimeout = Duration.seconds(600)
    /// How long a test waits for the reply before it fails (an immediate answer takes milliseconds).
    static let replyBound = Duration.seconds(20)

    /// Runs `body` with "mallory", a bare session, connected to a receiving engine that asks (`askTimeout`).
    static func withAskingReceiver(
        inbox: String, _ body: (_ mallory: Session, _ receiver: PeerID, _ engine: TransferEngine) async throws -> Void
    ) async throws {
        let reactor = try Reactor()
        defer { reactor.shutdown() }
        try await Session.run(configuration: TransferEngineTests.configuration("bob"), reactor: reactor) { bob in
            try await Session.run(configuration: TransferEngineTests.configuration("mallory"), reactor: reactor) {
                mallory in
                let receiving = TransferConfiguration(
                    receiveDirectory: inbox, offerPolicy: .ask, askTimeout: askTimeout)
                try await TransferEngine.run(session: bob, configuration: receiving) { engine in
                    let info = try await mallory.connect(
                        toAddress: .ipv4(.loopback, port: await bob.listenPort), timeout: .seconds(30))
                    try await body(mallory, info.peerID, engine)
                }
            }
        }
    }

    /// The sender's reply to its offer, or nil if none came within `replyBound` (or the link closed).
    static func reply(to sender: HostileSender) async -> OfferReply? {
        await withTaskGroup(of: OfferReply?.self) { group in
            group.addTask { await sender.reply() }
            group.addTask {
                try? await Task.sleep(for: replyBound)
                return nil
            }
            let first = await group.next() ?? nil
            group.cancelAll()
            return first
        }
    }

    @Test(arguments: [true, false])
    func anAnswerGivenTheMomentTheOfferIsAnnouncedIsCarriedOut(accept: Bool) async throws {
        try await TemporaryDirectory.with(prefix: "engine-in") { inbox in
            try await Self.withAskingReceiver(inbox: inbox.path) { mallory, bob, engine in
                let sender = HostileSender(session: mallory, receiver: bob)
                let offer = sender.offer([("early.bin", 4)])
                await engine.receiveAndAnswerAtOnce(offer, from: mallory.localPeerID, accept: accept)
                let reply = try #require(
                    await Self.reply(to: sender),
                    "no reply to the offer within \(Self.replyBound): the answer was lost")
                #expect(reply.accepted == accept)
                if !accept { #expect(reply.reason == .deniedByUser, "\(reply.reason)") }
                #expect(await engine.asksNothing)
            }
        }
    }

    /// A denial the application makes without asking (past its prompt rate) reaches the sender with its own reason
    /// and detail, not as "denied by the user" (issue 9 gap: the sender is told the true reason).
    @Test func aDenialWithAReasonReachesTheSenderWithThatReason() async throws {
        try await TemporaryDirectory.with(prefix: "engine-in") { inbox in
            try await Self.withAskingReceiver(inbox: inbox.path) { mallory, bob, engine in
                let sender = HostileSender(session: mallory, receiver: bob)
                let offer = sender.offer([("many.bin", 4)])
                await engine.offerReceived(offer, from: mallory.localPeerID)
                await engine.respond(
                    to: offer.transferID, from: mallory.localPeerID, accept: false, reason: .tooManyOffers,
                    detail: "at most 3 from one peer")
                let reply = try #require(await Self.reply(to: sender), "no reply within \(Self.replyBound)")
                #expect(!reply.accepted)
                #expect(reply.reason == .tooManyOffers, "\(reply.reason)")
                #expect(reply.detail == "at most 3 from one peer")
            }
        }
    }

    @Test func anAnswerGivenByTheEventsReaderStartsTheTransfer() async throws {
        try await TemporaryDirectory.with(prefix: "engine-in") { inbox in
            try await Self.withAskingReceiver(inbox: inbox.path) { mallory, bob, engine in
                let sender = HostileSender(session: mallory, receiver: bob)
                let answering = Task {
                    for await event in engine.events {
                        if case .offerReceived(let offer) = event {
                            await engine.respond(to: offer.transferID, from: offer.peer.peerID, accept: true)
                            return
                        }
                    }
                }
                defer { answering.cancel() }
                let bytes: [UInt8] = [1, 2, 3, 4]
                try await sender.send(.offer(sender.offer([("early.bin", UInt64(bytes.count))])))
                let reply = try #require(await Self.reply(to: sender), "no reply within \(Self.replyBound)")
                #expect(reply.accepted)
                try await sender.sendChunk(file: 0, offset: 0, raw: bytes)
                try await sender.sendEnd(file: 0, of: bytes)
                #expect(try #require(await sender.result()).status == .published)
            }
            #expect(try Data(contentsOf: URL(fileURLWithPath: inbox.path + "/early.bin")) == Data([1, 2, 3, 4]))
        }
    }

    @Test func anUnansweredOfferIsDeniedAtItsDeadlineAndALateAnswerIsIgnored() async throws {
        try await TemporaryDirectory.with(prefix: "engine-in") { inbox in
            let reactor = try Reactor()
            defer { reactor.shutdown() }
            try await Session.run(configuration: TransferEngineTests.configuration("bob"), reactor: reactor) { bob in
                try await Session.run(configuration: TransferEngineTests.configuration("mallory"), reactor: reactor) {
                    mallory in
                    let receiving = TransferConfiguration(
                        receiveDirectory: inbox.path, offerPolicy: .ask, askTimeout: .milliseconds(200))
                    try await TransferEngine.run(session: bob, configuration: receiving) { engine in
                        let info = try await mallory.connect(
                            toAddress: .ipv4(.loopback, port: await bob.listenPort), timeout: .seconds(30))
                        let sender = HostileSender(session: mallory, receiver: info.peerID)
                        let offer = sender.offer([("late.bin", 4)])
                        try await sender.send(.offer(offer))
                        let reply = try #require(await Self.reply(to: sender), "no reply within \(Self.replyBound)")
                        #expect(!reply.accepted && reply.reason == .noAnswer, "\(reply)")
                        await engine.respond(to: offer.transferID, from: mallory.localPeerID, accept: true)
                        #expect(await engine.receivesNothing)
                        #expect(await engine.asksNothing)
                    }
                }
            }
        }
    }
}

/// Accepting an offer never waits behind the staged writes of other transfers (issue 9, section 5).
@Suite(.serialized, .timeLimit(.minutes(2))) struct AcceptanceQueueTests {
    @Test func anOfferIsAcceptedWhileTheWriteQueueIsStuck() async throws {
        try await TemporaryDirectory.with(prefix: "engine-in") { inbox in
            try await TransferHostilePeerTests.withMallory(inbox: inbox.path, policy: .all) { mallory, bob, engine in
                // Stands for the queued writes of other transfers to a slow disk: nothing behind it runs until the
                // test ends.
                let gate = DispatchSemaphore(value: 0)
                let io = await engine.io
                io.submit { gate.wait() }
                defer { gate.signal() }
                let sender = HostileSender(session: mallory, receiver: bob)
                try await sender.send(.offer(sender.offer([("x.bin", 4)])))
                let reply = try #require(
                    await OfferAnswerTests.reply(to: sender),
                    "no reply within \(OfferAnswerTests.replyBound): acceptance waited behind the write queue")
                #expect(reply.accepted)
            }
        }
    }
}

@Suite struct DenialTextTests {
    /// A detail that only repeats the reason is said once; another detail follows the reason.
    @Test func aDetailThatRepeatsTheReasonIsNotSaidTwice() {
        #expect(TransferEngine.denialText(.noAnswer, "nobody answered in time") == "nobody answered in time")
        #expect(TransferEngine.denialText(.noAnswer, "") == "nobody answered in time")
        #expect(
            TransferEngine.denialText(.insufficientSpace, "the files need 2 MiB")
                == "\(OfferDenyReason.insufficientSpace): the files need 2 MiB")
    }
}

/// A receiver's answer that crosses the sender's cancel (a person accepted just as the sender gave up) is dropped by
/// the sender: the link stays up for what follows (PROTOCOL.md 11.10 rule 7).
@Suite(.timeLimit(.minutes(2))) struct CrossedReplyTests {
    @Test func aReplyThatCrossedTheSendersCancelLeavesTheLinkUp() async throws {
        try await TemporaryDirectory.with(prefix: "crossed-src") { source in
            let url = try TestFiles(in: source).random("a.bin", size: 1000, seed: 11)
            let reactor = try Reactor()
            defer { reactor.shutdown() }
            let configuration = TransferEngineTests.configuration
            try await Session.run(configuration: configuration("mallory"), reactor: reactor) { mallory in
                try await Session.run(configuration: configuration("alice"), reactor: reactor) { alice in
                    try await TransferEngine.run(session: alice, configuration: TransferConfiguration()) { sender in
                        let link = try await alice.connect(
                            toAddress: .ipv4(.loopback, port: await mallory.listenPort), timeout: .seconds(30))
                        let files = [SourceFile(path: url.path, name: "a.bin")]
                        let sending = Task { try await sender.send(files, to: [link.peerID]) }
                        defer { sending.cancel() }
                        let ours = TransferID.random()
                        var answered: OfferReply?
                        for await event in mallory.transferEvents {
                            if case .peerDisconnected = event { break }
                            guard case .frame(let frame, let alice) = event,
                                let message = try? TransferMessage(frame: frame)
                            else { continue }
                            switch message {
                            case .offer(let offer):
                                // The sender gives up before the answer; its send is over when this returns.
                                sending.cancel()
                                _ = try? await sending.value
                                let accept = OfferReply.accepting(
                                    offer.transferID, codecs: [], files: [.accept(from: 0)])
                                try await mallory.sendTransferFrame(
                                    [TransferMessage.offerReply(accept).frame.encoded()], to: alice)
                                // Then an offer of mallory's own: alice answers it (she receives nothing) only if
                                // the crossed answer left the link up.
                                let offer = Offer(
                                    transferID: ours, chunkSize: UInt32(Limits.minChunkSize), codecs: [],
                                    files: [
                                        OfferedFile(
                                            path: "b.bin", size: 1,
                                            modificationTime: FileTime(seconds: 0, nanoseconds: 0))
                                    ])
                                try await mallory.sendTransferFrame(
                                    [TransferMessage.offer(offer).frame.encoded()], to: alice)
                            case .offerReply(let reply) where reply.transferID == ours:
                                answered = reply
                            default:
                                continue
                            }
                            if answered != nil { break }
                        }
                        #expect(answered?.accepted == false, "alice answered mallory's offer on the same link")
                        #expect(await alice.peer(link.peerID)?.state == .connected)
                    }
                }
            }
        }
    }
}
