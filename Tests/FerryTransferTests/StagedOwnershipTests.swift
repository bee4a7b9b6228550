import FerrySession
import FerrySystem
import FerryTestSupport
import FerryWire
import Foundation
import Testing

@testable import FerryTransfer

/// A staged file belongs to one transfer at a time (issue 9, section 5): two transfers of the same file from the same
/// sender, in one receiving engine or in two engines (two `ferry receive` processes) on one directory, never write
/// into one staged file; the second is refused as busy, and what is published is what its own SHA-256 verified.
@Suite(.serialized, .timeLimit(.minutes(2))) struct StagedOwnershipTests {
    static let chunk = Limits.minChunkSize

    static func bytes(_ count: Int, _ seed: UInt8) -> [UInt8] {
        (0..<count).map { UInt8(truncatingIfNeeded: ($0 &* 131) >> 3) ^ seed ^ UInt8(truncatingIfNeeded: $0 / chunk) }
    }

    /// Sends chunks `range` of `data` (chunk indices) and waits for each acknowledgement.
    static func sendChunks(_ sender: HostileSender, _ data: [UInt8], _ range: Range<Int>) async throws {
        for index in range {
            let start = index * chunk
            try await sender.sendChunk(
                file: 0, offset: UInt64(start), raw: Array(data[start..<min(start + chunk, data.count)]))
            let ack = try #require(await sender.ack())
            #expect(ack.transferID == sender.transferID && ack.status == .stored)
        }
    }

    /// The offer of "same.bin" (6 chunks, the same name, size and time every time: the same resume key).
    static func offer(_ sender: HostileSender, _ name: String = "same.bin") -> Offer {
        sender.offer([(name, UInt64(6 * chunk))])
    }

    /// Two offers of one file from one device, both accepted at once by one engine, with a staged prefix to resume:
    /// the second is refused as busy, and the file published is the sender's, byte for byte (no zeros, no block
    /// of the other transfer).
    @Test func twoOffersOfOneFileAcceptedAtOnceShareNoStagedFile() async throws {
        try await TemporaryDirectory.with(prefix: "ownership-in") { inbox in
            try await TransferHostilePeerTests.withMallory(inbox: inbox.path, policy: .ask) { mallory, bob, engine in
                var offers = engine.events.compactMap { event -> TransferID? in
                    if case .offerReceived(let offer) = event { offer.transferID } else { nil }
                }.makeAsyncIterator()
                let data = Self.bytes(6 * Self.chunk, 7)
                // An interrupted transfer leaves two chunks staged.
                let first = HostileSender(session: mallory, receiver: bob)
                try await first.send(.offer(Self.offer(first)))
                #expect(await offers.next() == first.transferID)
                await engine.waitUntilAsking([first.transferID], from: mallory.localPeerID)
                await engine.respond(to: first.transferID, from: mallory.localPeerID, accept: true)
                #expect(try #require(await first.reply()).accepted)
                try await Self.sendChunks(first, data, 0..<2)
                try await first.send(
                    .cancel(TransferCancel(transferID: first.transferID, reason: .cancelledByUser, detail: "")))

                // Two offers of the same file, answered in one turn of the engine (as a trusted peer's are).
                let one = HostileSender(session: mallory, receiver: bob)
                let two = HostileSender(session: mallory, receiver: bob)
                try await one.send(.offer(Self.offer(one)))
                try await two.send(.offer(Self.offer(two)))
                #expect(await offers.next() == one.transferID)
                #expect(await offers.next() == two.transferID)
                await engine.waitUntilAsking([one.transferID, two.transferID], from: mallory.localPeerID)
                await engine.acceptBoth(one.transferID, two.transferID, from: mallory.localPeerID)
                var replies: [TransferID: OfferReply] = [:]
                while replies.count < 2, let reply = await one.reply() { replies[reply.transferID] = reply }
                let replyOne = try #require(replies[one.transferID])
                let replyTwo = try #require(replies[two.transferID])
                #expect(replyOne.accepted != replyTwo.accepted, "exactly one is accepted: \(replies)")
                let (winner, loser) = replyOne.accepted ? (one, two) : (two, one)
                let lost = try #require(replies[loser.transferID])
                #expect(lost.accepted || lost.reason == .busy, "\(lost)")
                let resumed = try #require(replies[winner.transferID]).files.first?.resumeOffset
                #expect(resumed == UInt64(2 * Self.chunk))

                try await Self.sendChunks(winner, data, 2..<4)
                if lost.accepted {
                    // The hole: the other transfer truncates the shared staged file to its resume offset and writes.
                    try await Self.sendChunks(loser, data, 2..<3)
                }
                try await Self.sendChunks(winner, data, 4..<6)
                try await winner.sendEnd(file: 0, of: data)
                let result = try #require(await winner.result())
                if result.status == .published {
                    let published = try Data(contentsOf: URL(fileURLWithPath: inbox.path + "/" + result.detail))
                    #expect(published == Data(data), "what is published is what was sent, byte for byte")
                } else {
                    Issue.record("the file was not published: \(result)")
                }
                if lost.accepted {
                    try await loser.send(
                        .cancel(TransferCancel(transferID: loser.transferID, reason: .cancelledByUser, detail: "")))
                }
            }
        }
    }

    /// The same without staged data: the second offer is still denied as busy at once (the claim is taken before
    /// the acceptance awaits anything, not only when there is staged data to lock).
    @Test func twoOffersOfANewFileAcceptedAtOnceAreOneAtATime() async throws {
        try await TemporaryDirectory.with(prefix: "ownership-in") { inbox in
            try await TransferHostilePeerTests.withMallory(inbox: inbox.path, policy: .ask) { mallory, bob, engine in
                var offers = engine.events.compactMap { event -> TransferID? in
                    if case .offerReceived(let offer) = event { offer.transferID } else { nil }
                }.makeAsyncIterator()
                let one = HostileSender(session: mallory, receiver: bob)
                let two = HostileSender(session: mallory, receiver: bob)
                try await one.send(.offer(Self.offer(one, "fresh.bin")))
                try await two.send(.offer(Self.offer(two, "fresh.bin")))
                #expect(await offers.next() == one.transferID)
                #expect(await offers.next() == two.transferID)
                await engine.waitUntilAsking([one.transferID, two.transferID], from: mallory.localPeerID)
                await engine.acceptBoth(one.transferID, two.transferID, from: mallory.localPeerID)
                var replies: [TransferID: OfferReply] = [:]
                while replies.count < 2, let reply = await one.reply() { replies[reply.transferID] = reply }
                let accepted = replies.values.filter(\.accepted)
                #expect(accepted.count == 1, "\(replies)")
                #expect(replies.values.contains { !$0.accepted && $0.reason == .busy }, "\(replies)")
                for reply in replies.values where reply.accepted {
                    try await mallory.sendTransferFrame(
                        [
                            TransferMessage.cancel(
                                TransferCancel(
                                    transferID: reply.transferID, reason: .cancelledByUser,
                                    detail: "")
                            ).frame.encoded()
                        ], to: bob)
                }
            }
        }
    }

    /// Two receiving engines on one directory (as two `ferry receive` processes): the same file (same sender, name,
    /// size and time) with different contents is written by one and refused as busy by the other (at its offer, or
    /// at its first write when the staged file did not exist yet at its offer), and the file published is one
    /// sender's data whole, never blocks of both.
    @Test func twoReceiversOnOneDirectoryShareNoStagedFile() async throws {
        try await TemporaryDirectory.with(prefix: "ownership-in") { inbox in
            let reactor = try Reactor()
            defer { reactor.shutdown() }
            let configuration = TransferEngineTests.configuration
            try await Session.run(configuration: configuration("bob"), reactor: reactor) { bob in
                try await Session.run(configuration: configuration("bob-too"), reactor: reactor) { bobToo in
                    try await Session.run(configuration: configuration("mallory"), reactor: reactor) { mallory in
                        let receiving = TransferConfiguration(receiveDirectory: inbox.path, offerPolicy: .all)
                        try await TransferEngine.run(session: bob, configuration: receiving) { _ in
                            try await TransferEngine.run(session: bobToo, configuration: receiving) { _ in
                                let first = try await mallory.connect(
                                    toAddress: .ipv4(.loopback, port: await bob.listenPort), timeout: .seconds(30))
                                let second = try await mallory.connect(
                                    toAddress: .ipv4(.loopback, port: await bobToo.listenPort), timeout: .seconds(30))
                                // The second offer comes after the first transfer staged data, then before.
                                for (name, early) in [("staged-first.bin", false), ("offered-first.bin", true)] {
                                    try await Self.race(
                                        HostileSender(session: mallory, receiver: first.peerID),
                                        HostileSender(session: mallory, receiver: second.peerID), inbox: inbox.path,
                                        name: name, early: early)
                                }
                            }
                        }
                    }
                }
            }
        }
    }

    /// One file offered to both receivers; `early`: the second offer comes before the first transfer wrote anything.
    private static func race(
        _ one: HostileSender, _ two: HostileSender, inbox: String, name: String, early: Bool
    ) async throws {
        let dataOne = bytes(6 * chunk, 1)
        let dataTwo = bytes(6 * chunk, 2)
        try await one.send(.offer(offer(one, name)))
        #expect(try #require(await one.reply()).accepted)
        if !early { try await sendChunks(one, dataOne, 0..<2) }
        try await two.send(.offer(offer(two, name)))
        let replyTwo = try #require(await two.reply())
        if early { try await sendChunks(one, dataOne, 0..<2) }
        // The other receiver refuses the file: at once (busy) when the staged data it would resume is held, else at
        // its first write, with the file's result instead of an acknowledgement.
        var refusal: String?
        if replyTwo.accepted {
            try await sendChunks(one, dataOne, 2..<4)
            let start = Int(replyTwo.files.first?.resumeOffset ?? 0)
            try await two.sendChunk(file: 0, offset: UInt64(start), raw: Array(dataTwo[start..<start + chunk]))
            let answer = try #require(
                await two.waitFor { message -> TransferMessage? in
                    switch message {
                    case .chunkAck, .fileResult: message
                    default: nil
                    }
                })
            if case .fileResult(let result) = answer {
                #expect(result.status == .writeFailed, "\(result)")
                refusal = result.detail
            }
            try await sendChunks(one, dataOne, 4..<6)
        } else {
            #expect(replyTwo.reason == .busy, "\(replyTwo)")
            refusal = replyTwo.detail
            try await sendChunks(one, dataOne, 2..<6)
        }
        #expect(
            refusal?.contains("another transfer") == true || refusal?.contains("being received") == true,
            "the second transfer is refused as busy: \(String(describing: refusal))")
        try await one.sendEnd(file: 0, of: dataOne)
        let result = try #require(await one.result())
        #expect(result.status == .published, "\(result)")
        if result.status == .published {
            let published = try Data(contentsOf: URL(fileURLWithPath: inbox + "/" + result.detail))
            #expect(published == Data(dataOne), "the published file is the first sender's data whole")
        }
        let names = try FileManager.default.contentsOfDirectory(atPath: inbox).filter { $0.hasPrefix(name.prefix(6)) }
        #expect(names == [name], "nothing of the second transfer is published: \(names)")
        if replyTwo.accepted, refusal == nil {
            try await two.send(
                .cancel(TransferCancel(transferID: two.transferID, reason: .cancelledByUser, detail: "")))
        }
    }
}

extension TransferEngine {
    /// Returns once the engine waits for an answer to each of the offers (an answer given earlier would be lost: the
    /// race of issue 9's hang, fixed apart from this test).
    func waitUntilAsking(_ ids: [TransferID], from peerID: PeerID) async {
        while !ids.allSatisfy({ incoming.asks[IncomingKey(peer: peerID, transferID: $0)] != nil }) {
            await Task.yield()
        }
    }

    /// Accepts two offers in one turn of the actor: neither acceptance runs before both are answered.
    func acceptBoth(_ one: TransferID, _ two: TransferID, from peerID: PeerID) {
        respond(to: one, from: peerID, accept: true)
        respond(to: two, from: peerID, accept: true)
    }
}
