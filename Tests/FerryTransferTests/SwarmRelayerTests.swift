import FerrySystem
import FerryTestSupport
import FerryWire
import Foundation
import Testing

@testable import FerrySession
@testable import FerryTransfer

/// A member cuts off a relayer whose chunk does not match the sender's digest, reports it, and gets the chunk from
/// the sender instead (PROTOCOL.md 11.11 rules 5 and 6); a peer not named in the offer gets nothing.
@Suite(.serialized, .timeLimit(.minutes(2))) struct SwarmRelayerTests {
    static let chunk = Limits.minChunkSize

    @Test func aRelayerThatFlipsBitsIsCutOffReportedAndTheChunkComesFromTheSender() async throws {
        let data = TestFiles.randomBytes(count: 3 * Self.chunk, seed: 62)
        try await SwarmMemberTests.withSessions(["alice", "mallory", "sam"], inbox: "swarm-a") { sessions, inbox in
            let (alice, mallory, sam) = (sessions[0], sessions[1], sessions[2])
            let config = TransferConfiguration(receiveDirectory: inbox.path, offerPolicy: .all)
            let cutOff = try await TransferEngine.run(session: alice, configuration: config) { engine in
                let events = engine.events
                let cutOff = Task { () -> RelayerReport? in
                    for await event in events {
                        if case .relayerCutOff(let report) = event { return report }
                    }
                    return nil
                }
                let toAlice = try await sam.connect(
                    toAddress: .ipv4(.loopback, port: await alice.listenPort), timeout: .seconds(30))
                let sender = SwarmMemberTests.ScriptedSender(session: sam, members: [toAlice.peerID])
                let members = [
                    SwarmMember(
                        deviceID: alice.configuration.deviceID,
                        address: "127.0.0.1:\(await alice.listenPort)"),
                    SwarmMember(
                        deviceID: mallory.configuration.deviceID,
                        address: "127.0.0.1:\(await mallory.listenPort)"),
                ]
                let reports = try await Self.run(
                    sender, mallory: mallory, alice: alice, data: data, members: members)
                #expect(reports == 1, "alice reported mallory once")
                return cutOff
            }
            // The engine has stopped, so its event stream has ended: the task has its answer.
            let report = await cutOff.value
            #expect(report?.offender == "mallory", "\(String(describing: report))")
            #expect(
                report?.fileIndex == 0 && report?.direction == .receiving, "\(String(describing: report))")
            let received = try [UInt8](Data(contentsOf: URL(fileURLWithPath: inbox.path + "/swarm.bin")))
            let same = received == data
            #expect(same, "the published file is the sent one, not mallory's")
        }
    }

    /// Sam offers one file to alice with a swarm of alice and mallory, seeds every chunk to mallory (who flips a bit
    /// in each chunk it relays), and answers alice's requests with the true chunks. Returns the reports alice made.
    static func run(
        _ sender: SwarmMemberTests.ScriptedSender, mallory: Session, alice: Session, data: [UInt8],
        members: [SwarmMember]
    ) async throws -> Int {
        let chunks = (data.count + chunk - 1) / chunk
        let offer = SwarmMemberTests.swarmOffer(sender, size: data.count, chunkSize: chunk, members: members)
        let swarmID = sender.swarmID
        // Mallory announces every chunk to alice and answers each request with the chunk's bytes, one bit flipped.
        let malloryEvents = mallory.transferEvents
        let relayer = Task {
            for await event in malloryEvents {
                guard case .frame(let frame, let peer) = event,
                    case .swarmRequest(let request)? = try? TransferMessage(frame: frame)
                else { continue }
                let index = Int(request.chunkIndex)
                var raw = Array(data[index * chunk..<min(data.count, (index + 1) * chunk)])
                raw[7] ^= 0x10
                let header = Chunk.frameHeader(
                    transferID: swarmID.transferID, fileIndex: 0, offset: UInt64(index * chunk),
                    rawLength: UInt32(raw.count), codec: .none, sha256: FileDigest.chunkDigest(raw),
                    dataLength: raw.count)
                try? await mallory.sendTransferFrame([header, raw], to: peer)
            }
        }
        defer { relayer.cancel() }
        try await sender.send(.offer(offer), to: 0)
        let announced = SwarmMemberTests.Step()
        let ended = SwarmMemberTests.Step()
        let seen = SwarmMemberTests.Seen()
        let finished = await sender.collect { member, message in
            seen.record(member, message)
            return seen.read { $0.results.count == 1 }
        } onEach: {
            if seen.read({ $0.replies.count == 1 }), announced.once() {
                #expect(seen.read { $0.replies[0]?.relay } == true)
                try await sender.send(
                    .swarmMembers(SwarmMembers(transferID: sender.transferID, members: [0, 1])), to: 0)
                let entries = (0..<chunks).map { index in
                    ChunkDigests.Entry(
                        seed: 1,
                        sha256: FileDigest.chunkDigest(data[index * chunk..<min(data.count, (index + 1) * chunk)]))
                }
                try await sender.send(
                    .chunkDigests(
                        ChunkDigests(transferID: sender.transferID, fileIndex: 0, firstChunk: 0, entries: entries)),
                    to: 0)
                // Mallory links up with alice (alice vouched for it when she accepted) and announces everything.
                _ = await mallory.vouch(for: [alice.configuration.deviceID], reason: "test")
                let link = try await mallory.connect(
                    toMember: alice.configuration.deviceID,
                    at: .ipv4(.loopback, port: await alice.listenPort), timeout: .seconds(30))
                let have = SwarmHave(swarmID: swarmID, fileIndex: 0, ranges: [0..<UInt64(chunks)])
                try await mallory.sendTransferFrame([TransferMessage.swarmHave(have).frame.encoded()], to: link.peerID)
            }
            // Alice asks the sender for what mallory spoiled: sam answers with the true chunk.
            for request in seen.takeRequests() {
                try await sender.sendChunk(data, index: Int(request.chunkIndex), to: 0)
            }
            if seen.read({ $0.acks[0]?.count == chunks }), ended.once() {
                let end = FileEnd(
                    transferID: sender.transferID, fileIndex: 0, digest: FileDigest.of(data, chunkSize: chunk))
                try await sender.send(.fileEnd(end), to: 0)
            }
        }
        #expect(finished, "alice finished the file")
        #expect(seen.read { $0.results[0]?.status } == .published)
        let acks = seen.read { $0.acks[0] } ?? [:]
        #expect(acks.values.allSatisfy { $0 == .stored }, "every chunk came from the sender in the end: \(acks)")
        let reports = seen.read { $0.reports }
        #expect(
            reports.allSatisfy { $0.offender == 1 && $0.reason == .badChunk && $0.transferID == sender.transferID },
            "\(reports)")
        return reports.count
    }

    /// Bob, a member, stops reading his link to alice and floods her with `swarmRequest`s for chunks she holds
    /// (PROTOCOL.md 11.11 rule 4, issue 27 point 6): she serves until his link holds the writer's high-water mark, then
    /// refuses `busy`, and each refusal is a frame queued for a link he never reads. What alice queues for him must stay
    /// within `memberQueueLimit` (past it, he is cut off), with neither side's stall deadline ever running out, and
    /// alice must still take the rest of the file from sam and publish it. The flood ends with a chunk nobody asked for:
    /// when alice was never driven to cut bob off, she reports that chunk to sam, so the test knows she handled it all.
    @Test func aMemberThatFloodsRequestsAndReadsNothingIsCutOffWithItsQueueBounded() async throws {
        let chunks = 8
        let data = TestFiles.randomBytes(count: chunks * Self.chunk, seed: 65)
        let reactor = try Reactor()
        defer { reactor.shutdown() }
        var aliceConfiguration = SwarmMemberTests.configuration("alice")
        aliceConfiguration.disconnectTimeout = .seconds(600)
        var bobConfiguration = SwarmMemberTests.configuration("bob")
        bobConfiguration.disconnectTimeout = .seconds(600)
        let (signals, signal) = AsyncStream.makeStream(of: String.self)
        try await TemporaryDirectory.with(prefix: "swarm-flood") { inbox in
            try await Session.run(configuration: aliceConfiguration, reactor: reactor) { alice in
                try await Session.run(configuration: bobConfiguration, reactor: reactor) { bob in
                    try await Session.run(configuration: SwarmMemberTests.configuration("sam"), reactor: reactor) {
                        sam in
                        let config = TransferConfiguration(
                            receiveDirectory: inbox.path, offerPolicy: .all,
                            log: { _, line in if line.contains("faster than it reads") { signal.yield(line) } })
                        try await TransferEngine.run(session: alice, configuration: config) { engine in
                            let toAlice = try await sam.connect(
                                toAddress: .ipv4(.loopback, port: await alice.listenPort), timeout: .seconds(30))
                            let sender = SwarmMemberTests.ScriptedSender(session: sam, members: [toAlice.peerID])
                            let cutOff = try await Self.flood(
                                sender, alice: alice, bob: bob, data: data, signals: signals, signal: signal)
                            let largest = await engine.probe.largestMemberQueue
                            let limit =
                                Session.transferQueueHighWater + Limits.maxSwarmRequestsInFlight * Self.chunk
                                + TransferEngine.memberControlAllowance
                            #expect(
                                largest <= limit, "alice queued \(largest) bytes for bob, more than the \(limit) bound")
                            #expect(cutOff.contains("bob"), "alice cut bob off for what he made her queue: \(cutOff)")
                        }
                    }
                }
            }
            let received = try [UInt8](Data(contentsOf: URL(fileURLWithPath: inbox.path + "/swarm.bin")))
            let same = received == data
            #expect(same, "alice published the file sam sent")
        }
    }

    /// Sam seeds chunks 0-3 to alice; bob floods her, then sam sends the rest once alice cut bob off or reported his
    /// last chunk. Returns the line that says why the flood ended.
    static func flood(
        _ sender: SwarmMemberTests.ScriptedSender, alice: Session, bob: Session, data: [UInt8],
        signals: AsyncStream<String>, signal: AsyncStream<String>.Continuation
    ) async throws -> String {
        let chunks = data.count / chunk
        let members = [
            SwarmMember(deviceID: alice.configuration.deviceID, address: "127.0.0.1:\(await alice.listenPort)"),
            SwarmMember(deviceID: bob.configuration.deviceID, address: ""),
        ]
        let offer = SwarmMemberTests.swarmOffer(sender, size: data.count, chunkSize: chunk, members: members)
        try await sender.send(.offer(offer), to: 0)
        let seeded = SwarmMemberTests.Step()
        let flooded = SwarmMemberTests.Step()
        let seen = SwarmMemberTests.Seen()
        let ending = Task { () -> String in
            var why = ""
            for await line in signals {
                why = line
                break
            }
            for index in 4..<chunks { try await sender.sendChunk(data, index: index, to: 0) }
            let end = FileEnd(
                transferID: sender.transferID, fileIndex: 0, digest: FileDigest.of(data, chunkSize: chunk))
            try await sender.send(.fileEnd(end), to: 0)
            return why
        }
        defer { ending.cancel() }
        let done = await sender.collect(timeout: .seconds(90)) { member, message in
            seen.record(member, message)
            if case .swarmReport(let report) = message { signal.yield("reported \(report.offender)") }
            return seen.read { $0.results.count == 1 }
        } onEach: {
            if seen.read({ $0.replies.count == 1 }), seeded.once() {
                try await sender.send(
                    .swarmMembers(SwarmMembers(transferID: sender.transferID, members: [0, 1])), to: 0)
                let entries = (0..<chunks).map { index in
                    ChunkDigests.Entry(
                        seed: 0, sha256: FileDigest.chunkDigest(data[index * chunk..<(index + 1) * chunk]))
                }
                try await sender.send(
                    .chunkDigests(
                        ChunkDigests(transferID: sender.transferID, fileIndex: 0, firstChunk: 0, entries: entries)),
                    to: 0)
                for index in 0..<4 { try await sender.sendChunk(data, index: index, to: 0) }
            }
            if seen.read({ $0.acks[0]?.count == 4 }), flooded.once() {
                _ = await bob.vouch(for: [alice.configuration.deviceID], reason: "test")
                let link = try await bob.connect(
                    toMember: alice.configuration.deviceID, at: .ipv4(.loopback, port: await alice.listenPort),
                    timeout: .seconds(30))
                await bob.pauseReading(of: link.peerID)
                // 64 chunks served fill the high-water mark; then some 60 000 refusals, 2 MiB more, unless bounded.
                let batch = (0..<500).map { index in
                    TransferMessage.swarmRequest(
                        SwarmRequest(
                            swarmID: sender.swarmID, fileIndex: 0, chunkIndex: UInt32(index % 4), codecs: [])
                    ).frame.encoded()
                }
                for _ in 0..<120 {
                    guard (try? await bob.sendTransferFrame(batch, to: link.peerID)) != nil else { break }
                }
                let raw = Array(data[(chunks - 1) * chunk..<chunks * chunk])
                let header = Chunk.frameHeader(
                    transferID: sender.swarmID.transferID, fileIndex: 0, offset: UInt64((chunks - 1) * chunk),
                    rawLength: UInt32(chunk), codec: .none, sha256: FileDigest.chunkDigest(raw), dataLength: chunk)
                _ = try? await bob.sendTransferFrame([header, raw], to: link.peerID)
            }
        }
        #expect(done, "alice finished the file")
        #expect(seen.read { $0.results[0]?.status } == .published)
        ending.cancel()
        return (try? await ending.value) ?? ""
    }

    /// Announcements to a member that reads slowly wait and then go out together (issue 27 point 6): bob stops
    /// reading his link to alice and asks her for chunks until the link holds the writer's high-water mark; sam then
    /// seeds 8 more chunks to alice. Alice queues no announcement of them behind what bob does not read; once bob reads
    /// again, he learns of all 8 in fewer frames than chunks (one `swarmHave` of ranges, not one frame a chunk).
    @Test func announcementsToAMemberThatReadsSlowlyWaitAndGoOutAsRanges() async throws {
        let chunks = 12
        let data = TestFiles.randomBytes(count: chunks * Self.chunk, seed: 66)
        let reactor = try Reactor()
        defer { reactor.shutdown() }
        var aliceConfiguration = SwarmMemberTests.configuration("alice")
        aliceConfiguration.disconnectTimeout = .seconds(600)
        var bobConfiguration = SwarmMemberTests.configuration("bob")
        bobConfiguration.disconnectTimeout = .seconds(600)
        try await TemporaryDirectory.with(prefix: "swarm-announce") { inbox in
            try await Session.run(configuration: aliceConfiguration, reactor: reactor) { alice in
                try await Session.run(configuration: bobConfiguration, reactor: reactor) { bob in
                    try await Session.run(configuration: SwarmMemberTests.configuration("sam"), reactor: reactor) {
                        sam in
                        let config = TransferConfiguration(receiveDirectory: inbox.path, offerPolicy: .all)
                        try await TransferEngine.run(session: alice, configuration: config) { _ in
                            let toAlice = try await sam.connect(
                                toAddress: .ipv4(.loopback, port: await alice.listenPort), timeout: .seconds(30))
                            let sender = SwarmMemberTests.ScriptedSender(session: sam, members: [toAlice.peerID])
                            try await Self.announceToAStalledMember(sender, alice: alice, bob: bob, data: data)
                        }
                    }
                }
            }
        }
    }

    static func announceToAStalledMember(
        _ sender: SwarmMemberTests.ScriptedSender, alice: Session, bob: Session, data: [UInt8]
    ) async throws {
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
        // Bob links up, stops reading, and asks until alice's link to him holds the high-water mark.
        _ = await bob.vouch(for: [alice.configuration.deviceID], reason: "test")
        let link = try await bob.connect(
            toMember: alice.configuration.deviceID, at: .ipv4(.loopback, port: await alice.listenPort),
            timeout: .seconds(30))
        await bob.pauseReading(of: link.peerID)
        let requests = (0..<200).map { index in
            TransferMessage.swarmRequest(
                SwarmRequest(swarmID: sender.swarmID, fileIndex: 0, chunkIndex: UInt32(index % 4), codecs: [])
            ).frame.encoded()
        }
        try await bob.sendTransferFrame(requests, to: link.peerID)
        let bobOnAlice = try #require(
            await alice.peers(withState: .connected).first { $0.deviceID == bob.configuration.deviceID }?.peerID)
        let deadline = ContinuousClock.now + .seconds(60)
        while await !alice.transferQueueIsFull(to: bobOnAlice), ContinuousClock.now < deadline {
            try await Task.sleep(for: .milliseconds(10))
        }
        try #require(await alice.transferQueueIsFull(to: bobOnAlice), "alice's link to bob holds 4 MiB unsent")
        // Sam seeds 8 more chunks to alice: she stores them while bob reads nothing.
        for index in 4..<chunks { try await sender.sendChunk(data, index: index, to: 0) }
        let all = await sender.collect { member, message in
            seen.record(member, message)
            return seen.read { $0.acks[0]?.count == chunks }
        } onEach: {
        }
        try #require(all, "alice stored every chunk")
        await bob.resumeReading(of: link.peerID)
        // Bob reads what alice queued: the announcements of chunks 4-11 come after what he asked for.
        let (covered, frames) = await withTaskGroup(of: (Set<UInt64>, Int)?.self) { group in
            group.addTask {
                var covered: Set<UInt64> = []
                var frames = 0
                for await event in bob.transferEvents {
                    guard case .frame(let frame, let peer) = event, peer == link.peerID,
                        case .swarmHave(let have)? = try? TransferMessage(frame: frame)
                    else { continue }
                    let new = have.ranges.flatMap { Array($0) }.filter { $0 >= 4 }
                    guard !new.isEmpty else { continue }
                    frames += 1
                    covered.formUnion(new)
                    if covered.count == chunks - 4 { return (covered, frames) }
                }
                return nil
            }
            group.addTask {
                try? await Task.sleep(for: .seconds(60))
                return nil
            }
            let first = await group.next() ?? nil
            group.cancelAll()
            return first ?? ([], 0)
        }
        #expect(covered == Set((4..<UInt64(chunks))), "bob learnt of chunks \(covered.sorted())")
        #expect(frames < chunks - 4, "\(frames) swarmHave frames for \(chunks - 4) chunks")
        let end = FileEnd(transferID: sender.transferID, fileIndex: 0, digest: FileDigest.of(data, chunkSize: chunk))
        try await sender.send(.fileEnd(end), to: 0)
    }

    /// A peer connected to a member in the ordinary way, but not named in the offer's swarm, asks for a chunk the
    /// member holds: it gets nothing, and its link is closed (PROTOCOL.md 11.11 rule 1).
    @Test func aPeerNotNamedInTheOfferGetsNothingFromTheSwarm() async throws {
        let data = TestFiles.randomBytes(count: Self.chunk, seed: 63)
        try await SwarmMemberTests.withSessions(["alice", "eve", "sam"], inbox: "swarm-a") { sessions, inbox in
            let (alice, eve, sam) = (sessions[0], sessions[1], sessions[2])
            let config = TransferConfiguration(receiveDirectory: inbox.path, offerPolicy: .all)
            try await TransferEngine.run(session: alice, configuration: config) { _ in
                let port = await alice.listenPort
                let toAlice = try await sam.connect(
                    toAddress: .ipv4(.loopback, port: port), timeout: .seconds(30))
                let sender = SwarmMemberTests.ScriptedSender(session: sam, members: [toAlice.peerID])
                let members = [
                    SwarmMember(deviceID: alice.configuration.deviceID, address: "127.0.0.1:\(port)"),
                    SwarmMember(deviceID: TestIdentity.named("bob").deviceID, address: ""),
                ]
                let offer = SwarmMemberTests.swarmOffer(
                    sender, size: data.count, chunkSize: Self.chunk, members: members)
                try await sender.send(.offer(offer), to: 0)
                let seen = SwarmMemberTests.Seen()
                let seeded = SwarmMemberTests.Step()
                let stored = await sender.collect { member, message in
                    seen.record(member, message)
                    return seen.read { $0.acks[0]?.count == 1 }
                } onEach: {
                    guard seen.read({ $0.replies.count == 1 }), seeded.once() else { return }
                    let list = SwarmMembers(transferID: sender.transferID, members: [0, 1])
                    try await sender.send(.swarmMembers(list), to: 0)
                    let digests = ChunkDigests(
                        transferID: sender.transferID, fileIndex: 0, firstChunk: 0,
                        entries: [ChunkDigests.Entry(seed: 0, sha256: FileDigest.chunkDigest(data))])
                    try await sender.send(.chunkDigests(digests), to: 0)
                    try await sender.sendChunk(data, index: 0, to: 0)
                }
                #expect(stored, "alice stored the chunk the sender seeded to her")
                // Eve, an ordinary peer of alice's, asks her for that chunk by the swarm's ID.
                let link = try await eve.connect(
                    toAddress: .ipv4(.loopback, port: port), timeout: .seconds(30))
                let request = SwarmRequest(
                    swarmID: sender.swarmID, fileIndex: 0, chunkIndex: 0, codecs: [])
                try await eve.sendTransferFrame(
                    [TransferMessage.swarmRequest(request).frame.encoded()], to: link.peerID)
                let toEve = HostileSender(session: eve, receiver: link.peerID)
                var chunks = 0
                var closed = false
                loop: while true {
                    switch await toEve.nextEvent() {
                    case .message(.chunk): chunks += 1
                    case .message: continue
                    case .linkClosed:
                        closed = true
                        break loop
                    case .streamEnded, .timedOut: break loop
                    }
                }
                #expect(chunks == 0, "eve got no chunk")
                #expect(closed, "alice closed eve's link for a swarm frame she may not send")
            }
        }
    }
}
