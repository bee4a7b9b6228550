import FerrySystem
import FerryTestSupport
import FerryWire
import Foundation
import Testing

@testable import FerrySession
@testable import FerryTransfer

/// A member of a swarm that stops reading (a laptop that sleeps, a member on a link far slower than the others) holds
/// up nobody: the member serving it queues what it can without waiting and goes on with the sender's chunks and the
/// other members' frames (PROTOCOL.md 11.11 rule 4).
@Suite(.serialized, .timeLimit(.minutes(2))) struct SwarmStalledMemberTests {
    static let chunk = Limits.maxChunkSize

    /// Sam offers alice one file of 5 chunks of 4 MiB in a swarm of alice and bob, and seeds chunks 0-3 to her. Bob
    /// links up with alice, stops reading, asks her for those four chunks (16 MiB: far more than the link's writer
    /// queue and the socket buffers hold), then sends her a chunk she never asked for. Alice must still handle that
    /// frame (report bob to sam and cut him off) and take the rest of the file from sam. A member that waited for bob
    /// to read before handling its next frame would stall on the second chunk it served him: sam would never see the
    /// report, and the collection below would run out of time.
    @Test func aMemberThatStopsReadingHoldsUpNeitherTheSenderNorTheOthers() async throws {
        let data = TestFiles.randomBytes(count: 5 * Self.chunk, seed: 64)
        let reactor = try Reactor()
        defer { reactor.shutdown() }
        // Neither side gives up on the other for the test's whole length: only alice's own handling can end it.
        var aliceConfiguration = SwarmMemberTests.configuration("alice")
        aliceConfiguration.disconnectTimeout = .seconds(600)
        var bobConfiguration = SwarmMemberTests.configuration("bob")
        bobConfiguration.disconnectTimeout = .seconds(600)
        try await TemporaryDirectory.with(prefix: "swarm-stalled") { inbox in
            try await Session.run(configuration: aliceConfiguration, reactor: reactor) { alice in
                try await Session.run(configuration: bobConfiguration, reactor: reactor) { bob in
                    try await Session.run(configuration: SwarmMemberTests.configuration("sam"), reactor: reactor) {
                        sam in
                        let config = TransferConfiguration(receiveDirectory: inbox.path, offerPolicy: .all)
                        try await TransferEngine.run(session: alice, configuration: config) { _ in
                            let toAlice = try await sam.connect(
                                toAddress: .ipv4(.loopback, port: await alice.listenPort), timeout: .seconds(30))
                            let sender = SwarmMemberTests.ScriptedSender(session: sam, members: [toAlice.peerID])
                            try await Self.run(sender, alice: alice, bob: bob, data: data)
                        }
                    }
                }
            }
            let received = try [UInt8](Data(contentsOf: URL(fileURLWithPath: inbox.path + "/swarm.bin")))
            let same = received == data
            #expect(same, "alice published the file sam sent")
        }
    }

    static func run(
        _ sender: SwarmMemberTests.ScriptedSender, alice: Session, bob: Session, data: [UInt8]
    ) async throws {
        let chunks = data.count / chunk
        let members = [
            SwarmMember(deviceID: alice.configuration.deviceID, address: "127.0.0.1:\(await alice.listenPort)"),
            SwarmMember(deviceID: bob.configuration.deviceID, address: "127.0.0.1:\(await bob.listenPort)"),
        ]
        let offer = SwarmMemberTests.swarmOffer(sender, size: data.count, chunkSize: chunk, members: members)
        @Sendable func raw(_ index: Int) -> ArraySlice<UInt8> { data[index * chunk..<(index + 1) * chunk] }
        /// Chunk `index` as `transferID`'s (sam's transfer, or the swarm's for a relayed one) from `session`.
        @Sendable func sendChunk(_ index: Int, as transferID: TransferID, from session: Session, to peerID: PeerID)
            async throws
        {
            let header = Chunk.frameHeader(
                transferID: transferID, fileIndex: 0, offset: UInt64(index * chunk), rawLength: UInt32(chunk),
                codec: .none, sha256: FileDigest.chunkDigest(raw(index)), dataLength: chunk)
            try await session.sendTransferFrame([header, Array(raw(index))], to: peerID)
        }
        try await sender.send(.offer(offer), to: 0)
        let seeded = SwarmMemberTests.Step()
        let stalled = SwarmMemberTests.Step()
        let finished = SwarmMemberTests.Step()
        let seen = SwarmMemberTests.Seen()
        let done = await sender.collect { member, message in
            seen.record(member, message)
            return seen.read { $0.results.count == 1 }
        } onEach: {
            if seen.read({ $0.replies.count == 1 }), seeded.once() {
                #expect(seen.read { $0.replies[0]?.relay } == true)
                try await sender.send(
                    .swarmMembers(SwarmMembers(transferID: sender.transferID, members: [0, 1])), to: 0)
                let entries = (0..<chunks).map {
                    ChunkDigests.Entry(seed: 0, sha256: FileDigest.chunkDigest(raw($0)))
                }
                try await sender.send(
                    .chunkDigests(
                        ChunkDigests(transferID: sender.transferID, fileIndex: 0, firstChunk: 0, entries: entries)),
                    to: 0)
                for index in 0..<4 {
                    try await sendChunk(index, as: sender.transferID, from: sender.session, to: sender.members[0])
                }
            }
            if seen.read({ $0.acks[0]?.count == 4 }), stalled.once() {
                // Bob links up with alice (she vouched for him when she accepted), stops reading, and asks.
                _ = await bob.vouch(for: [alice.configuration.deviceID], reason: "test")
                let link = try await bob.connect(
                    toMember: alice.configuration.deviceID, at: .ipv4(.loopback, port: await alice.listenPort),
                    timeout: .seconds(30))
                await bob.pauseReading(of: link.peerID)
                for index in 0..<4 {
                    let request = SwarmRequest(
                        swarmID: sender.swarmID, fileIndex: 0, chunkIndex: UInt32(index), codecs: [])
                    try await bob.sendTransferFrame(
                        [TransferMessage.swarmRequest(request).frame.encoded()], to: link.peerID)
                }
                try await sendChunk(4, as: sender.swarmID.transferID, from: bob, to: link.peerID)
            }
            // Alice handled bob's last frame: the rest comes from sam.
            if !seen.read({ $0.reports.isEmpty }), finished.once() {
                try await sendChunk(4, as: sender.transferID, from: sender.session, to: sender.members[0])
                let end = FileEnd(
                    transferID: sender.transferID, fileIndex: 0, digest: FileDigest.of(data, chunkSize: chunk))
                try await sender.send(.fileEnd(end), to: 0)
            }
        }
        #expect(done, "alice finished the file; reports: \(seen.read { $0.reports })")
        #expect(seen.read { $0.results[0]?.status } == .published)
        let reports = seen.read { $0.reports }
        #expect(reports.count == 1 && reports.first?.offender == 1, "alice reported bob once: \(reports)")
    }
}
