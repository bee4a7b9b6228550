import FerrySession
import FerrySystem
import FerryTestSupport
import FerryWire
import Foundation
import Testing

@testable import FerryTransfer

/// What another accepted sender, or a member's own damaged staging, can do to a member's part in a swarm (issue 27
/// points 2 and 5): a live swarm ID is not taken over, the vouch for the other members ends with the swarm, and a
/// resumed chunk that fails the sender's digest is fetched once and stored.
extension SwarmMemberTests {
    /// Alice is a member of sam's broadcast when mallory, another sender she accepts, offers a transfer with the
    /// same swarm ID (every co-member knows it). Alice takes mallory's offer without the swarm (no `relay`: a plain
    /// transfer, PROTOCOL.md 11.11), sam's broadcast goes on and is published, and once sam's list leaves alice out
    /// her swarm ends and she vouches for none of its members. (Before, mallory's offer replaced sam's swarm: sam's
    /// next `chunkDigests` was a protocol violation and its link closed, and sam's vouch was never taken back.)
    @Test func anOfferReusingALiveSwarmIDIsTakenWithoutTheSwarmAndTheVouchEndsWithTheSwarm() async throws {
        let data = TestFiles.randomBytes(count: 2 * Self.chunk, seed: 91)
        let small = TestFiles.randomBytes(count: 1000, seed: 92)
        try await Self.withSessions(["alice", "sam", "mallory"], inbox: "swarm-takeover") { sessions, inbox in
            let (alice, sam, mallory) = (sessions[0], sessions[1], sessions[2])
            let bob = TestIdentity.named("bob").deviceID
            let config = TransferConfiguration(receiveDirectory: inbox.path, offerPolicy: .all)
            try await TransferEngine.run(session: alice, configuration: config) { engine in
                let events = engine.events
                let swarmEnded = Task { () -> Bool in
                    for await event in events {
                        if case .swarmEnded = event { return true }
                    }
                    return false
                }
                defer { swarmEnded.cancel() }
                let port = await alice.listenPort
                let toAlice = try await sam.connect(toAddress: .ipv4(.loopback, port: port), timeout: .seconds(30))
                let malloryLink = try await mallory.connect(
                    toAddress: .ipv4(.loopback, port: port), timeout: .seconds(30))
                let sender = ScriptedSender(session: sam, members: [toAlice.peerID])
                let members = [
                    SwarmMember(deviceID: alice.configuration.deviceID, address: "127.0.0.1:\(port)"),
                    SwarmMember(deviceID: bob, address: ""),
                ]
                try await sender.send(.offer(Self.swarmOffer(sender, size: data.count, members: members)), to: 0)
                let seen = Seen()
                let seeded = Step()
                let ended = Step()
                let finished = await sender.collect { member, message in
                    seen.record(member, message)
                    return seen.read { $0.results[0] != nil }
                } onEach: {
                    guard seen.read({ $0.replies.count == 1 }), seeded.once() else {
                        if seen.read({ $0.acks[0]?.count == 2 }), ended.once() {
                            let end = FileEnd(
                                transferID: sender.transferID, fileIndex: 0,
                                digest: FileDigest.of(data, chunkSize: Self.chunk))
                            try await sender.send(.fileEnd(end), to: 0)
                        }
                        return
                    }
                    #expect(seen.read { $0.replies[0]?.relay } == true)
                    // Mallory's offer: one short file, the live swarm ID, a list naming alice and mallory.
                    let other = HostileSender(session: mallory, receiver: malloryLink.peerID)
                    var offer = other.offer([("mallory.bin", UInt64(small.count))], chunkSize: Self.chunk)
                    offer.swarm = Swarm(
                        swarmID: sender.swarmID,
                        members: [
                            members[0],
                            SwarmMember(deviceID: mallory.configuration.deviceID, address: ""),
                        ])
                    try await other.send(.offer(offer))
                    let reply = try #require(await other.reply())
                    #expect(reply.accepted && !reply.relay, "mallory's offer is taken without the swarm: \(reply)")
                    try await other.sendChunk(file: 0, offset: 0, raw: small)
                    try await other.sendEnd(file: 0, of: small, chunkSize: Self.chunk)
                    #expect(await other.result()?.status == .published, "mallory's file arrives as a plain transfer")
                    // Sam's broadcast goes on: a list, the digests, both chunks seeded to alice.
                    try await sender.send(
                        .swarmMembers(SwarmMembers(transferID: sender.transferID, members: [0, 1])), to: 0)
                    try await sender.send(
                        .chunkDigests(SwarmMemberEndTests.digests(sender, data, seeds: [0, 0])), to: 0)
                    for index in 0..<2 { try await sender.sendChunk(data, index: index, to: 0) }
                }
                #expect(finished, "sam's broadcast reached alice: \(seen.read { $0.other })")
                #expect(seen.read { $0.results[0]?.status } == .published)
                guard finished else { return }
                #expect(await alice.isVouched(bob), "alice serves on while sam lists her")
                // The broadcast is over: sam's empty list ends alice's part, and her vouch with it.
                try await sender.send(.swarmMembers(SwarmMembers(transferID: sender.transferID, members: [])), to: 0)
                #expect(await swarmEnded.value, "alice's part in the swarm ended")
                #expect(!(await alice.isVouched(bob)), "the vouch for bob ended with the swarm")
                #expect(!(await alice.isVouched(mallory.configuration.deviceID)), "nobody vouched for mallory")
                let received = try [UInt8](Data(contentsOf: URL(fileURLWithPath: inbox.path + "/swarm.bin")))
                #expect(received == data, "sam's file is the one published")
            }
        }
    }

    /// The vouch ends with the swarm whatever ends it: here the sender cancels the transfer (alice's `finished`
    /// comes after her vouch is gone), then alice joins a second broadcast and her engine stops (the vouch is gone
    /// when `run` returns). Meanwhile the same sender's second offer with the live swarm ID is taken plain.
    @Test func theVouchEndsWhenTheTransferIsCancelledAndWhenTheEngineStops() async throws {
        try await Self.withSessions(["alice", "sam"], inbox: "swarm-vouch") { sessions, inbox in
            let (alice, sam) = (sessions[0], sessions[1])
            let bob = TestIdentity.named("bob").deviceID
            let config = TransferConfiguration(receiveDirectory: inbox.path, offerPolicy: .all)
            try await TransferEngine.run(session: alice, configuration: config) { engine in
                let port = await alice.listenPort
                let toAlice = try await sam.connect(toAddress: .ipv4(.loopback, port: port), timeout: .seconds(30))
                let members = [
                    SwarmMember(deviceID: alice.configuration.deviceID, address: "127.0.0.1:\(port)"),
                    SwarmMember(deviceID: bob, address: ""),
                ]
                let sender = HostileSender(session: sam, receiver: toAlice.peerID)
                var offer = sender.offer([("swarm.bin", UInt64(Self.chunk))], chunkSize: Self.chunk)
                offer.swarm = Swarm(swarmID: SwarmID.random(), members: members)
                try await sender.send(.offer(offer))
                #expect(try #require(await sender.reply()).relay)
                #expect(await alice.isVouched(bob), "a member vouches for the others")
                // The same sender's second transfer with the live swarm ID is a plain one.
                let twin = HostileSender(session: sam, receiver: toAlice.peerID)
                var same = twin.offer([("twin.bin", UInt64(Self.chunk))], chunkSize: Self.chunk)
                same.swarm = offer.swarm
                try await twin.send(.offer(same))
                let reply = try #require(await twin.reply())
                #expect(reply.accepted && !reply.relay, "\(reply)")
                let events = engine.events
                try await sender.send(
                    .cancel(TransferCancel(transferID: sender.transferID, reason: .cancelledByUser, detail: "")))
                for await event in events {
                    if case .finished = event { break }
                }
                #expect(!(await alice.isVouched(bob)), "the vouch ended with the cancelled transfer")
                // A second broadcast, and the engine stops while alice is in it.
                let second = HostileSender(session: sam, receiver: toAlice.peerID)
                var again = second.offer([("swarm.bin", UInt64(Self.chunk))], chunkSize: Self.chunk)
                again.swarm = Swarm(swarmID: SwarmID.random(), members: members)
                try await second.send(.offer(again))
                #expect(try #require(await second.reply()).relay)
                #expect(await alice.isVouched(bob))
            }
            #expect(!(await alice.isVouched(bob)), "the vouch ended when the engine stopped")
        }
    }

    /// A resumed chunk that fails the sender's digest is not held, by the fetcher nor by the transfer: alice's
    /// staged chunk 1 was damaged on disk after her interrupted transfer. She fetches it from bob (who got it from
    /// the sender), once, acknowledges it `storedFromPeer` and publishes the file. (Before, her transfer still
    /// counted the damaged chunk stored: every copy bob served was dropped and asked for again until `fileEnd`,
    /// and the file failed its digest.) The damaged chunk was sent again: alice's file event counts one chunk
    /// resumed, as her `finished` does (issue 28, 3: the file event said two).
    @Test func aDamagedResumedChunkIsFetchedOnceFromAMemberAndTheFileIsPublished() async throws {
        let data = TestFiles.randomBytes(count: 4 * Self.chunk, seed: 93)
        let reactor = try Reactor()
        defer { reactor.shutdown() }
        try await TemporaryDirectory.with(prefix: "swarm-a") { inboxA in
            try await TemporaryDirectory.with(prefix: "swarm-b") { inboxB in
                try await Session.run(configuration: Self.configuration("alice"), reactor: reactor) { alice in
                    try await Session.run(configuration: Self.configuration("bob"), reactor: reactor) { bob in
                        try await Session.run(configuration: Self.configuration("sam"), reactor: reactor) { sam in
                            let a = TransferConfiguration(receiveDirectory: inboxA.path, offerPolicy: .all)
                            let b = TransferConfiguration(receiveDirectory: inboxB.path, offerPolicy: .all)
                            try await TransferEngine.run(session: alice, configuration: a) { aliceEngine in
                                try await TransferEngine.run(session: bob, configuration: b) { bobEngine in
                                    let toAlice = try await sam.connect(
                                        toAddress: .ipv4(.loopback, port: await alice.listenPort),
                                        timeout: .seconds(30))
                                    let toBob = try await sam.connect(
                                        toAddress: .ipv4(.loopback, port: await bob.listenPort),
                                        timeout: .seconds(30))
                                    // The interrupted transfer: two chunks of four reach alice.
                                    let first = HostileSender(session: sam, receiver: toAlice.peerID)
                                    try await first.send(
                                        .offer(first.offer([("swarm.bin", UInt64(data.count))], chunkSize: Self.chunk)))
                                    #expect(try #require(await first.reply()).accepted)
                                    for index in 0..<2 {
                                        try await first.sendChunk(
                                            file: 0, offset: UInt64(index * Self.chunk),
                                            raw: Array(data[index * Self.chunk..<(index + 1) * Self.chunk]))
                                        #expect(try #require(await first.ack()).status == .stored)
                                    }
                                    try await first.send(
                                        .cancel(
                                            TransferCancel(
                                                transferID: first.transferID, reason: .cancelledByUser, detail: "")))
                                    // Chunk 1 of her staged data changes on disk.
                                    let staging = inboxA.path + "/.ferry-staging"
                                    let name = try #require(
                                        try FileManager.default.contentsOfDirectory(atPath: staging).first)
                                    let staged = try FileHandle(forUpdating: URL(fileURLWithPath: staging + "/" + name))
                                    try staged.seek(toOffset: UInt64(Self.chunk + 100))
                                    try staged.write(contentsOf: [data[Self.chunk + 100] ^ 0xFF])
                                    try staged.close()
                                    let sender = ScriptedSender(session: sam, members: [toAlice.peerID, toBob.peerID])
                                    let resumed = Task {
                                        var files: [UInt64] = []
                                        for await event in aliceEngine.events {
                                            if case .fileFinished(let file) = event { files.append(file.resumedBytes) }
                                            if case .finished(let outcome) = event, outcome.failure == nil {
                                                return (files, outcome.resumedBytes)
                                            }
                                        }
                                        return (files, UInt64.max)
                                    }
                                    try await Self.runDamagedResumedSwarm(
                                        sender, data: data,
                                        members: [
                                            SwarmMember(
                                                deviceID: alice.configuration.deviceID,
                                                address: "127.0.0.1:\(await alice.listenPort)"),
                                            SwarmMember(
                                                deviceID: bob.configuration.deviceID,
                                                address: "127.0.0.1:\(await bob.listenPort)"),
                                        ])
                                    // Bob served alice chunks 1 to 3, each once; alice stored those three.
                                    let served = await bobEngine.memberSwarm(sender.swarmID)?.servedBytes
                                    let relayed = await aliceEngine.memberSwarm(sender.swarmID)?.relayedBytes
                                    #expect(served == UInt64(3 * Self.chunk), "bob served each chunk once")
                                    #expect(relayed == UInt64(3 * Self.chunk), "alice stored each chunk once")
                                    let (files, total) = await resumed.value
                                    #expect(files == [UInt64(Self.chunk)], "only chunk 0 was not sent again")
                                    #expect(total == UInt64(Self.chunk))
                                }
                            }
                        }
                    }
                }
                let received = try [UInt8](Data(contentsOf: URL(fileURLWithPath: inboxA.path + "/swarm.bin")))
                #expect(received == data, "alice published the sent file")
            }
        }
    }

    /// Alice holds chunks 0-1 (her resumed prefix, chunk 1 damaged); the sender seeds chunk 0 to nobody (alice is
    /// its seed) and chunks 1-3 to bob. Alice must store 1-3 from bob, bob 0 from alice.
    static func runDamagedResumedSwarm(_ sender: ScriptedSender, data: [UInt8], members: [SwarmMember]) async throws {
        let seen = Seen()
        let offer = swarmOffer(sender, size: data.count, members: members)
        for member in 0..<2 { try await sender.send(.offer(offer), to: member) }
        let seeded = Step()
        let ended = Step()
        let finished = await sender.collect { member, message in
            seen.record(member, message)
            return seen.read { $0.results.count == 2 }
        } onEach: {
            if seen.read({ $0.replies.count == 2 }), seeded.once() {
                #expect(seen.read { $0.replies[0]?.files.first?.resumeOffset } == UInt64(2 * chunk))
                for member in 0..<2 {
                    let list = SwarmMembers(transferID: sender.transferID, members: [0, 1])
                    try await sender.send(.swarmMembers(list), to: member)
                }
                let entries = (0..<4).map { index in
                    ChunkDigests.Entry(
                        seed: index == 0 ? 0 : 1,
                        sha256: FileDigest.chunkDigest(data[index * chunk..<(index + 1) * chunk]))
                }
                let digests = ChunkDigests(transferID: sender.transferID, fileIndex: 0, firstChunk: 0, entries: entries)
                for member in 0..<2 { try await sender.send(.chunkDigests(digests), to: member) }
                for index in 1..<4 { try await sender.sendChunk(data, index: index, to: 1) }
            }
            // Alice's end once she stored chunks 2 and 3 (and bob everything): chunk 1 may still be on its way.
            let aliceHas = seen.read { acks in [2, 3].allSatisfy { acks.acks[0]?[UInt64($0 * chunk)] != nil } }
            if aliceHas, seen.read({ $0.acks[1]?.count == 4 }), ended.once() {
                let end = FileEnd(
                    transferID: sender.transferID, fileIndex: 0, digest: FileDigest.of(data, chunkSize: chunk))
                for member in 0..<2 { try await sender.send(.fileEnd(end), to: member) }
            }
        }
        #expect(finished, "both members sent their result")
        let aliceAcks = seen.read { $0.acks[0] } ?? [:]
        #expect(
            aliceAcks == [
                UInt64(chunk): .storedFromPeer, UInt64(2 * chunk): .storedFromPeer, UInt64(3 * chunk): .storedFromPeer,
            ], "\(aliceAcks)")
        for member in 0..<2 {
            let result = seen.read { $0.results[member] }
            #expect(result?.status == .published, "member \(member): \(String(describing: result))")
        }
    }
}
