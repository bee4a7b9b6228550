import FerryStateMachines
import FerrySystem
import FerryTestSupport
import FerryWire
import Foundation
import Synchronization
import Testing

@testable import FerrySession
@testable import FerryTransfer

/// What a member queues for another member (PROTOCOL.md 11.11 rule 4, issue 27 points 6 and 9): announcements wait
/// for room without going round and round, the bound on a member's queue counts only the member's own frames (the
/// same link carries other traffic), and a resumed chunk whose check found no read handle free is checked once one is.
@Suite(.serialized, .timeLimit(.minutes(2))) struct SwarmMemberQueueTests {
    static let chunk = Limits.minChunkSize
    static let highWater = Session.transferQueueHighWater

    /// Alice, a member holding chunks 0-3 of 8, linked to bob (a bare session that reads what she sends): bob asked
    /// her for chunk 0, and read her announcement of 0-3 and the chunk. `body` gets alice's peer ID for bob and bob's
    /// frames still to read.
    static func withLinkedMember(
        _ configuration: TransferConfiguration = TransferConfiguration(receiveDirectory: nil, offerPolicy: .all),
        _ body:
            @escaping @Sendable (
                TransferEngine, Session, SwarmMemberTests.ScriptedSender, PeerID, Session, PeerID, [UInt8]
            ) async throws -> Void
    ) async throws {
        let chunks = 8
        let data = TestFiles.randomBytes(count: chunks * Self.chunk, seed: 71)
        let reactor = try Reactor()
        defer { reactor.shutdown() }
        var aliceConfiguration = SwarmMemberTests.configuration("alice")
        aliceConfiguration.disconnectTimeout = .seconds(600)
        try await TemporaryDirectory.with(prefix: "swarm-queue") { inbox in
            try await Session.run(configuration: aliceConfiguration, reactor: reactor) { alice in
                try await Session.run(configuration: SwarmMemberTests.configuration("bob"), reactor: reactor) { bob in
                    try await Session.run(configuration: SwarmMemberTests.configuration("sam"), reactor: reactor) {
                        sam in
                        var config = configuration
                        config.receiveDirectory = inbox.path
                        try await TransferEngine.run(session: alice, configuration: config) { engine in
                            let toAlice = try await sam.connect(
                                toAddress: .ipv4(.loopback, port: await alice.listenPort), timeout: .seconds(30))
                            let sender = SwarmMemberTests.ScriptedSender(session: sam, members: [toAlice.peerID])
                            let (bobOnAlice, link) = try await Self.link(sender, alice: alice, bob: bob, data: data)
                            try await body(engine, alice, sender, bobOnAlice, bob, link, data)
                        }
                    }
                }
            }
        }
    }

    static func link(_ sender: SwarmMemberTests.ScriptedSender, alice: Session, bob: Session, data: [UInt8])
        async throws -> (PeerID, PeerID)
    {
        let chunks = data.count / chunk
        let members = [
            SwarmMember(deviceID: alice.configuration.deviceID, address: "127.0.0.1:\(await alice.listenPort)"),
            SwarmMember(deviceID: bob.configuration.deviceID, address: ""),
        ]
        let offer = SwarmMemberTests.swarmOffer(sender, size: data.count, chunkSize: chunk, members: members)
        try await sender.send(.offer(offer), to: 0)
        let seen = SwarmMemberTests.Seen()
        let seeded = SwarmMemberTests.Step()
        let stored = await sender.collect { member, message in
            seen.record(member, message)
            return seen.read { $0.acks[0]?.count == 4 }
        } onEach: {
            guard seen.read({ $0.replies.count == 1 }), seeded.once() else { return }
            try await sender.send(.swarmMembers(SwarmMembers(transferID: sender.transferID, members: [0, 1])), to: 0)
            let entries = (0..<chunks).map { index in
                ChunkDigests.Entry(seed: 0, sha256: FileDigest.chunkDigest(data[index * chunk..<(index + 1) * chunk]))
            }
            try await sender.send(
                .chunkDigests(
                    ChunkDigests(transferID: sender.transferID, fileIndex: 0, firstChunk: 0, entries: entries)),
                to: 0)
            for index in 0..<4 { try await sender.sendChunk(data, index: index, to: 0) }
        }
        try #require(stored, "alice stored the first 4 chunks")
        _ = await bob.vouch(for: [alice.configuration.deviceID], reason: "test")
        let link = try await bob.connect(
            toMember: alice.configuration.deviceID, at: .ipv4(.loopback, port: await alice.listenPort),
            timeout: .seconds(30))
        try await bob.sendTransferFrame([request(sender.swarmID, 0).frame.encoded()], to: link.peerID)
        var announced = false
        var served = false
        for await event in bob.transferEvents {
            guard case .frame(let frame, _) = event, let message = try? TransferMessage(frame: frame) else { continue }
            if case .swarmHave(let have) = message, have.ranges.contains(0..<4) { announced = true }
            if case .chunk(let chunk) = message, chunk.offset == 0 { served = true }
            if announced, served { break }
        }
        try #require(announced && served, "bob was announced chunks 0-3 and served chunk 0")
        let bobOnAlice = try #require(
            await alice.peers(withState: .connected).first { $0.deviceID == bob.configuration.deviceID }?.peerID)
        return (bobOnAlice, link.peerID)
    }

    static func request(_ swarmID: SwarmID, _ index: Int) -> TransferMessage {
        .swarmRequest(SwarmRequest(swarmID: swarmID, fileIndex: 0, chunkIndex: UInt32(index), codecs: []))
    }

    /// A chunk frame of a transfer bob knows nothing of, `count` bytes long in all: traffic of alice's own on the link.
    static func plainFrame(count: Int) -> [[UInt8]] {
        let probe = Chunk.frameHeader(
            transferID: TransferID.random(), fileIndex: 0, offset: 0, rawLength: 1, codec: .none,
            sha256: [UInt8](repeating: 0, count: 32), dataLength: 1)
        let raw = [UInt8](repeating: 0x5A, count: count - probe.count)
        let header = Chunk.frameHeader(
            transferID: TransferID.random(), fileIndex: 0, offset: 0, rawLength: UInt32(raw.count), codec: .none,
            sha256: FileDigest.chunkDigest(raw), dataLength: raw.count)
        return [header, raw]
    }

    /// Polls `condition` (alice's state, which nothing announces) until it holds or 60 seconds passed.
    static func poll(_ condition: () async -> Bool) async throws {
        let deadline = ContinuousClock.now + .seconds(60)
        while await !condition(), ContinuousClock.now < deadline { try await Task.sleep(for: .milliseconds(5)) }
    }

    /// Issue 27 point 6 (review): alice's link to bob holds one byte less than the writer's high-water mark (her own
    /// traffic, unsent) when she stores chunk 4. The announcement must be queued then (the link holds less than the
    /// mark; one frame may pass it), not wait for room the link already has: a wait that returns at once and a
    /// `swarmHave` refused again went round and round, at full CPU, until the link's stall deadline.
    @Test func anAnnouncementToALinkJustUnderTheMarkIsQueuedNotRetriedInALoop() async throws {
        try await Self.withLinkedMember { engine, alice, sender, bobOnAlice, bob, _, data in
            let held = try #require(await alice.holdWriting(to: bobOnAlice))
            try await alice.sendTransferFrame(
                Self.plainFrame(count: Self.highWater - 1 - held), to: bobOnAlice, waitForRoom: false)
            let filled = await alice.queuedTransferBytes(to: bobOnAlice)?.all
            #expect(filled == Self.highWater - 1)
            let waitsBefore = await engine.probe.announcementWaits
            try await sender.sendChunk(data, index: 4, to: 0)
            let seen = SwarmMemberTests.Seen()
            let stored = await sender.collect { member, message in
                seen.record(member, message)
                return seen.read { $0.acks[0]?[UInt64(4 * Self.chunk)] != nil }
            } onEach: {
            }
            try #require(stored, "alice stored chunk 4")
            // Either the announcement is queued (the link then holds the mark or more) or the waits pile up.
            try await Self.poll {
                let queued = await alice.queuedTransferBytes(to: bobOnAlice)?.all ?? 0
                return await engine.probe.announcementWaits - waitsBefore > 100 || queued >= Self.highWater
            }
            let waits = await engine.probe.announcementWaits - waitsBefore
            #expect(
                waits <= 1, "announcements to bob waited for room \(waits) times while the link held less than the mark"
            )
            let queued = await alice.queuedTransferBytes(to: bobOnAlice)?.all ?? 0
            #expect(queued >= Self.highWater, "alice queued the announcement")
            await alice.resumeWriting(to: bobOnAlice)
            var announced = false
            for await event in bob.transferEvents {
                guard case .frame(let frame, _) = event, case .swarmHave(let have)? = try? TransferMessage(frame: frame)
                else { continue }
                if have.ranges.contains(where: { $0.contains(4) }) {
                    announced = true
                    break
                }
            }
            #expect(announced, "bob learnt of chunk 4")
        }
    }

    /// Issue 27 point 6 (review): alice's link to bob also carries her own traffic, 8 MiB of a plain send (two 4 MiB
    /// chunks) that bob has not read yet. Bob, an honest member, asks for 4 chunks: she refuses them `busy` (the link
    /// holds the mark) and must not cut him off, since what she queued for him as a member is a few bytes; once he
    /// reads again she serves him.
    @Test func aMemberLinkThatAlsoCarriesALargePlainSendIsNotCutOff() async throws {
        let lines = Mutex<[String]>([])
        let configuration = TransferConfiguration(
            receiveDirectory: nil, offerPolicy: .all,
            log: { _, line in if line.contains("cut off") { lines.withLock { $0.append(line) } } })
        try await Self.withLinkedMember(configuration) { _, alice, sender, bobOnAlice, bob, link, _ in
            let held = try #require(await alice.holdWriting(to: bobOnAlice))
            for _ in 0..<2 {
                try await alice.sendTransferFrame(
                    Self.plainFrame(count: Limits.maxChunkSize), to: bobOnAlice, waitForRoom: false)
            }
            let plain = held + 2 * Limits.maxChunkSize
            let refusal = TransferMessage.swarmRefuse(
                SwarmRefuse(swarmID: sender.swarmID, fileIndex: 0, chunkIndex: 0, reason: .busy)
            ).frame.encoded().count
            try await bob.sendTransferFrame((0..<4).map { Self.request(sender.swarmID, $0).frame.encoded() }, to: link)
            // Alice answers all four (the link then holds four refusals more), or cuts bob off (and it ends).
            try await Self.poll {
                guard let queued = await alice.queuedTransferBytes(to: bobOnAlice) else { return true }
                return queued.all >= plain + 4 * refusal
            }
            #expect(lines.withLock { $0 }.isEmpty, "\(lines.withLock { $0 })")
            let queued = try #require(await alice.queuedTransferBytes(to: bobOnAlice), "alice's link to bob is up")
            #expect(queued.member == 4 * refusal, "what alice queued for bob as a member: \(queued)")
            await alice.resumeWriting(to: bobOnAlice)
            var busy = 0
            var servedAgain = false
            for await event in bob.transferEvents {
                switch event {
                case .frame(let frame, _):
                    switch try? TransferMessage(frame: frame) {
                    case .swarmRefuse(let refuse)?:
                        #expect(refuse.reason == .busy)
                        busy += 1
                        if busy == 4 {
                            try await bob.sendTransferFrame([Self.request(sender.swarmID, 1).frame.encoded()], to: link)
                        }
                    case .chunk(let chunk)? where chunk.transferID == sender.swarmID.transferID:
                        servedAgain = chunk.offset == UInt64(Self.chunk)
                    default: break
                    }
                case .peerDisconnected: break
                }
                if servedAgain || busy > 4 { break }
                if case .peerDisconnected = event { break }
            }
            #expect(busy == 4 && servedAgain, "bob got \(busy) busy refusals, then chunk 1: \(servedAgain)")
        }
    }

    /// Issue 27 point 9 (review): alice resumes two chunks of file 0 with a single read handle, which a chunk of
    /// file 1 being served holds when the sender's digests arrive. The check of her resumed chunks finds no handle
    /// free; it must run once the handle is handed back, or the chunks stay unchecked for good (never announced, and
    /// a damaged one never fetched again).
    @Test func aResumedChunkCheckedWhileEveryReadHandleIsBusyIsCheckedOnceOneIsFree() async throws {
        let data = TestFiles.randomBytes(count: 8 * Self.chunk, seed: 72)
        let (first, second) = (Array(data[..<(4 * Self.chunk)]), Array(data[(4 * Self.chunk)...]))
        try await SwarmMemberTests.withSessions(["alice", "sam"], inbox: "swarm-verify") { sessions, inbox in
            let (alice, sam) = (sessions[0], sessions[1])
            var config = TransferConfiguration(receiveDirectory: inbox.path, offerPolicy: .all)
            config.swarmReadHandles = 1
            try await TransferEngine.run(session: alice, configuration: config) { engine in
                let toAlice = try await sam.connect(
                    toAddress: .ipv4(.loopback, port: await alice.listenPort), timeout: .seconds(30))
                let files = [("swarm.bin", UInt64(first.count)), ("other.bin", UInt64(second.count))]
                // The interrupted transfer: two chunks of file 0 reach alice.
                let interrupted = HostileSender(session: sam, receiver: toAlice.peerID)
                try await interrupted.send(.offer(interrupted.offer(files, chunkSize: Self.chunk)))
                #expect(try #require(await interrupted.reply()).accepted)
                for index in 0..<2 {
                    try await interrupted.sendChunk(
                        file: 0, offset: UInt64(index * Self.chunk),
                        raw: Array(first[index * Self.chunk..<(index + 1) * Self.chunk]))
                    #expect(try #require(await interrupted.ack()).status == .stored)
                }
                try await interrupted.send(
                    .cancel(TransferCancel(transferID: interrupted.transferID, reason: .cancelledByUser, detail: "")))
                let sender = SwarmMemberTests.ScriptedSender(session: sam, members: [toAlice.peerID])
                let offer = Offer(
                    transferID: sender.transferID, chunkSize: UInt32(Self.chunk), codecs: [],
                    files: files.map {
                        OfferedFile(path: $0.0, size: $0.1, modificationTime: FileTime(seconds: 0, nanoseconds: 0))
                    },
                    swarm: Swarm(
                        swarmID: sender.swarmID,
                        members: [
                            SwarmMember(
                                deviceID: alice.configuration.deviceID, address: "127.0.0.1:\(await alice.listenPort)"),
                            SwarmMember(deviceID: TestIdentity.named("bob").deviceID, address: ""),
                        ]))
                try await sender.send(.offer(offer), to: 0)
                let seen = SwarmMemberTests.Seen()
                let replied = await sender.collect { member, message in
                    seen.record(member, message)
                    return seen.read { $0.replies.count == 1 }
                } onEach: {
                }
                try #require(replied)
                #expect(seen.read { $0.replies[0]?.files.first?.resumeOffset } == UInt64(2 * Self.chunk))
                try await sender.send(
                    .swarmMembers(SwarmMembers(transferID: sender.transferID, members: [0, 1])), to: 0)
                // A chunk of file 1 being served holds the only read handle.
                #expect(await engine.useSwarmReader(1, sender.swarmID), "alice has a read handle on file 1")
                let entries = (0..<4).map { index in
                    ChunkDigests.Entry(
                        seed: 0, sha256: FileDigest.chunkDigest(first[index * Self.chunk..<(index + 1) * Self.chunk]))
                }
                try await sender.send(
                    .chunkDigests(
                        ChunkDigests(transferID: sender.transferID, fileIndex: 0, firstChunk: 0, entries: entries)),
                    to: 0)
                let resumed = [SwarmChunk(file: 0, index: 0), SwarmChunk(file: 0, index: 1)]
                try await Self.poll { await engine.memberSwarm(sender.swarmID)?.fetcher.digest(of: resumed[1]) != nil }
                let before = await resumed.asyncMap { await engine.memberSwarm(sender.swarmID)?.fetcher.holds($0) }
                #expect(before == [false, false], "no handle to check them with yet")
                await engine.releaseSwarmReader(1, sender.swarmID)
                let after = await resumed.asyncMap { await engine.memberSwarm(sender.swarmID)?.fetcher.holds($0) }
                #expect(after == [true, true], "alice checked her resumed chunks once the handle was free")
            }
        }
    }
}

extension Array {
    fileprivate func asyncMap<T>(_ transform: (Element) async -> T) async -> [T] {
        var result: [T] = []
        for element in self { result.append(await transform(element)) }
        return result
    }
}
