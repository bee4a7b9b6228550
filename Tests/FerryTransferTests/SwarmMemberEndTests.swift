import FerrySession
import FerrySystem
import FerryTestSupport
import FerryWire
import Foundation
import Testing

@testable import FerryTransfer

/// A member never waits forever on anyone, and its part in a swarm ends with its transfer when the sender's list left
/// it out (PROTOCOL.md 11.11; the flaky hang of a `ferry receive --once` member under load). One receiving engine,
/// alice; a scripted sender; the other member, bob, never links up (its address is empty, and it never dials).
@Suite(.serialized, .timeLimit(.minutes(3))) struct SwarmMemberEndTests {
    static let chunk = Limits.minChunkSize

    /// Runs alice's engine and a scripted sender with a link to her; `body` gets the engine, the sender, and the
    /// offer's member list (alice, then bob).
    static func withAlice(
        _ body: (TransferEngine, SwarmMemberTests.ScriptedSender, [SwarmMember]) async throws -> Void
    ) async throws {
        try await SwarmMemberTests.withSessions(["alice", "sam"], inbox: "swarm-end") { sessions, inbox in
            let (alice, sam) = (sessions[0], sessions[1])
            let config = TransferConfiguration(receiveDirectory: inbox.path, offerPolicy: .all)
            try await TransferEngine.run(session: alice, configuration: config) { engine in
                let port = await alice.listenPort
                let toAlice = try await sam.connect(
                    toAddress: .ipv4(.loopback, port: port), timeout: .seconds(30))
                let members = [
                    SwarmMember(deviceID: alice.configuration.deviceID, address: "127.0.0.1:\(port)"),
                    SwarmMember(deviceID: TestIdentity.named("bob").deviceID, address: ""),
                ]
                try await body(
                    engine, SwarmMemberTests.ScriptedSender(session: sam, members: [toAlice.peerID]), members)
            }
        }
    }

    static func offer(_ sender: SwarmMemberTests.ScriptedSender, size: Int, members: [SwarmMember]) -> Offer {
        Offer(
            transferID: sender.transferID, chunkSize: UInt32(chunk), codecs: [],
            files: [
                OfferedFile(
                    path: "swarm.bin", size: UInt64(size), modificationTime: FileTime(seconds: 0, nanoseconds: 0))
            ],
            swarm: Swarm(swarmID: sender.swarmID, members: members))
    }

    static func digests(_ sender: SwarmMemberTests.ScriptedSender, _ data: [UInt8], seeds: [UInt16]) -> ChunkDigests {
        let entries = seeds.indices.map { index in
            ChunkDigests.Entry(
                seed: seeds[index],
                sha256: FileDigest.chunkDigest(data[index * chunk..<min(data.count, (index + 1) * chunk)]))
        }
        return ChunkDigests(transferID: sender.transferID, fileIndex: 0, firstChunk: 0, entries: entries)
    }

    /// The chunk bob seeds never comes from bob (no link to him ever comes up, so he never announces it): once a
    /// request timeout passes with nothing stored, alice asks the sender for it, gets it, and publishes the file.
    /// (Before, she waited for bob's announcement forever and her transfer never ended.)
    @Test func aChunkWhoseSeedNeverAnnouncesItIsAskedOfTheSender() async throws {
        let data = TestFiles.randomBytes(count: 2 * Self.chunk, seed: 71)
        try await Self.withAlice { _, sender, members in
            try await sender.send(.offer(Self.offer(sender, size: data.count, members: members)), to: 0)
            let seen = SwarmMemberTests.Seen()
            let seeded = SwarmMemberTests.Step()
            let answered = SwarmMemberTests.Step()
            let ended = SwarmMemberTests.Step()
            let finished = await sender.collect(timeout: .seconds(150)) { member, message in
                seen.record(member, message)
                return seen.read { $0.results[0] != nil }
            } onEach: {
                if seen.read({ $0.replies.count == 1 }), seeded.once() {
                    #expect(seen.read { $0.replies[0]?.relay } == true)
                    let list = SwarmMembers(transferID: sender.transferID, members: [0, 1])
                    try await sender.send(.swarmMembers(list), to: 0)
                    try await sender.send(.chunkDigests(Self.digests(sender, data, seeds: [0, 1])), to: 0)
                    try await sender.sendChunk(data, index: 0, to: 0)
                }
                let asked = seen.read { $0.requests.contains { $0.chunkIndex == 1 } }
                if asked, answered.once() {
                    try await sender.sendChunk(data, index: 1, to: 0)
                }
                if seen.read({ $0.acks[0]?.count == 2 }), ended.once() {
                    let end = FileEnd(
                        transferID: sender.transferID, fileIndex: 0, digest: FileDigest.of(data, chunkSize: Self.chunk))
                    try await sender.send(.fileEnd(end), to: 0)
                }
            }
            #expect(finished, "alice asked the sender for bob's chunk and ended: \(seen.read { $0.other })")
            #expect(seen.read { $0.results[0]?.status } == .published)
            #expect(seen.read { $0.acks[0] } == [0: .stored, UInt64(Self.chunk): .stored])
        }
    }

    /// The sender's list leaves alice out (the empty list that ends a broadcast may overtake her last result): when
    /// her transfer then ends, her part in the swarm ends with it (no later list would end it).
    @Test func aMemberLeftOutBeforeItsTransferEndedLeavesTheSwarmWhenItEnds() async throws {
        let data = TestFiles.randomBytes(count: Self.chunk, seed: 72)
        try await Self.withAlice { engine, sender, members in
            try await sender.send(.offer(Self.offer(sender, size: data.count, members: members)), to: 0)
            let seen = SwarmMemberTests.Seen()
            let seeded = SwarmMemberTests.Step()
            let ended = SwarmMemberTests.Step()
            let finished = await sender.collect { member, message in
                seen.record(member, message)
                return seen.read { $0.results[0] != nil }
            } onEach: {
                if seen.read({ $0.replies.count == 1 }), seeded.once() {
                    let list = SwarmMembers(transferID: sender.transferID, members: [0, 1])
                    try await sender.send(.swarmMembers(list), to: 0)
                    try await sender.send(.chunkDigests(Self.digests(sender, data, seeds: [0])), to: 0)
                    try await sender.sendChunk(data, index: 0, to: 0)
                }
                if seen.read({ $0.acks[0]?.count == 1 }), ended.once() {
                    try await sender.send(
                        .swarmMembers(SwarmMembers(transferID: sender.transferID, members: [])), to: 0)
                    let end = FileEnd(
                        transferID: sender.transferID, fileIndex: 0, digest: FileDigest.of(data, chunkSize: Self.chunk))
                    try await sender.send(.fileEnd(end), to: 0)
                }
            }
            #expect(finished, "alice published the file")
            for await event in engine.events {
                if case .finished = event { break }
            }
            let swarms = await engine.memberSwarmCount
            #expect(swarms == 0, "alice's part in the swarm ended with her transfer")
        }
    }
}
