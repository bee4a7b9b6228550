import FerrySession
import FerrySystem
import FerryTestSupport
import FerryWire
import Foundation
import Testing

@testable import FerryTransfer

/// A member's side of a swarm broadcast (PROTOCOL.md 11.11), driven by a scripted sender: two receiving engines
/// named in the offer's swarm reply `relay`, link up with each other, fetch the chunks the sender seeded to the other
/// one, check them against the sender's digests, acknowledge them `storedFromPeer`, and publish identical files.
@Suite(.serialized, .timeLimit(.minutes(2))) struct SwarmMemberTests {
    static let chunk = Limits.minChunkSize

    /// The scripted sender: a bare session connected to each member, reading every transfer frame they send.
    struct ScriptedSender {
        let session: Session
        let members: [PeerID]
        let transferID = TransferID.random()
        let swarmID = SwarmID.random()

        func send(_ message: TransferMessage, to member: Int) async throws {
            try await session.sendTransferFrame([message.frame.encoded()], to: members[member])
        }

        func sendChunk(_ data: [UInt8], index: Int, to member: Int) async throws {
            let raw = Array(
                data[index * SwarmMemberTests.chunk..<min(data.count, (index + 1) * SwarmMemberTests.chunk)])
            let header = Chunk.frameHeader(
                transferID: transferID, fileIndex: 0, offset: UInt64(index * SwarmMemberTests.chunk),
                rawLength: UInt32(raw.count), codec: .none, sha256: FileDigest.chunkDigest(raw), dataLength: raw.count)
            try await session.sendTransferFrame([header, raw], to: members[member])
        }

        /// Reads frames from the members until `done` says so (with the member index of each), running `onEach`
        /// after each (the script's next steps), or until the time is up.
        func collect(
            timeout: Duration = .seconds(60), until done: @escaping @Sendable (Int, TransferMessage) -> Bool,
            onEach: @escaping @Sendable () async throws -> Void
        ) async -> Bool {
            let events = session.transferEvents
            let members = self.members
            return await withTaskGroup(of: Bool.self) { group in
                group.addTask {
                    for await event in events {
                        guard case .frame(let frame, let peer) = event, let index = members.firstIndex(of: peer),
                            let message = try? TransferMessage(frame: frame)
                        else { continue }
                        if done(index, message) { return true }
                        do {
                            try await onEach()
                        } catch {
                            Issue.record("the script failed: \(error)")
                            return false
                        }
                    }
                    return false
                }
                group.addTask {
                    try? await Task.sleep(for: timeout)
                    return false
                }
                let first = await group.next() ?? false
                group.cancelAll()
                return first
            }
        }
    }

    /// What the sender saw from the members, counted under a lock (the collector runs in a task of its own).
    final class Seen: @unchecked Sendable {
        let lock = NSLock()
        var replies: [Int: OfferReply] = [:]
        var acks: [Int: [UInt64: ChunkStatus]] = [:]
        var results: [Int: FileResult] = [:]
        var requests: [SwarmRequest] = []
        var reports: [SwarmReport] = []
        var other: [String] = []

        func record(_ member: Int, _ message: TransferMessage) {
            lock.lock()
            defer { lock.unlock() }
            switch message {
            case .offerReply(let reply): replies[member] = reply
            case .chunkAck(let ack): acks[member, default: [:]][ack.offset] = ack.status
            case .fileResult(let result): results[member] = result
            case .swarmRequest(let request): requests.append(request)
            case .swarmReport(let report): reports.append(report)
            default: other.append("\(member): \(message.kind)")
            }
        }

        /// The requests recorded since the last call.
        func takeRequests() -> [SwarmRequest] {
            lock.lock()
            defer { lock.unlock() }
            defer { requests = [] }
            return requests
        }

        func read<T>(_ body: (Seen) -> T) -> T {
            lock.lock()
            defer { lock.unlock() }
            return body(self)
        }
    }

    static func configuration(_ name: String) -> SessionConfiguration {
        TransferEngineTests.configuration(name)
    }

    /// Runs `body` with one session per name, in order, on one reactor, and a temporary folder for a receiver.
    static func withSessions<T: Sendable>(
        _ names: [String], inbox prefix: String, _ body: ([Session], TemporaryDirectory) async throws -> T
    ) async throws -> T {
        let reactor = try Reactor()
        defer { reactor.shutdown() }
        return try await TemporaryDirectory.with(prefix: prefix) { inbox in
            try await SwarmSendingTests.withSessions(names[...], reactor) { sessions in
                try await body(sessions, inbox)
            }
        }
    }

    /// The offer of one file, `swarm.bin` of `size` bytes, with a swarm of `members`.
    static func swarmOffer(
        _ sender: ScriptedSender, size: Int, chunkSize: Int = chunk, codecs: CodecSet = [], members: [SwarmMember]
    ) -> Offer {
        Offer(
            transferID: sender.transferID, chunkSize: UInt32(chunkSize), codecs: codecs,
            files: [
                OfferedFile(
                    path: "swarm.bin", size: UInt64(size), modificationTime: FileTime(seconds: 0, nanoseconds: 0))
            ],
            swarm: Swarm(swarmID: sender.swarmID, members: members))
    }

    @Test func membersFetchFromEachOtherAndAcknowledgeStoredFromPeer() async throws {
        let data = TestFiles.randomBytes(count: 4 * Self.chunk + 100, seed: 61)
        let chunks = 5
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
                                    let sender = ScriptedSender(session: sam, members: [toAlice.peerID, toBob.peerID])
                                    try await Self.runSwarm(
                                        sender, data: data, chunks: chunks,
                                        members: [
                                            SwarmMember(
                                                deviceID: alice.configuration.deviceID,
                                                address: "127.0.0.1:\(await alice.listenPort)"),
                                            SwarmMember(
                                                deviceID: bob.configuration.deviceID,
                                                address: "127.0.0.1:\(await bob.listenPort)"),
                                        ])
                                    _ = (aliceEngine, bobEngine)
                                }
                            }
                        }
                    }
                }
                for inbox in [inboxA, inboxB] {
                    let received = try [UInt8](Data(contentsOf: URL(fileURLWithPath: inbox.path + "/swarm.bin")))
                    let same = received == data
                    #expect(same, "the published file in \(inbox.path) is the sent one")
                }
            }
        }
    }

    /// A sender cannot make a member a connection scanner (issue 27 point 8, PROTOCOL.md 11.11 rule 4): the offer
    /// names eight members besides alice at loopback listeners that accept and close (every dial fails), and the
    /// sender sends the same `swarmMembers` five times. Alice dials each of them once: a list that comes before the
    /// pause after a failed dial brings no dial again. Before each list goes, alice has decided on the last one for every
    /// member (a failed dial or a dial not made, in her log), so a dial still under way never hides one.
    @Test func membersAreDialledOnceHoweverOftenTheSenderSendsItsList() async throws {
        let (lists, fakes) = (5, 8)
        let reactor = try Reactor()
        defer { reactor.shutdown() }
        let listeners = try (0..<fakes).map { _ in try reactor.listenTCP(on: .ipv4(.loopback, port: 0)) }
        let accepted = Counts()
        let acceptors = listeners.enumerated().map { index, listener in
            Task {
                while let connection = try? await listener.accept() {
                    accepted.add(index + 1)
                    connection.close()
                }
            }
        }
        defer {
            for listener in listeners { listener.close() }
            for acceptor in acceptors { acceptor.cancel() }
        }
        let (lines, line) = AsyncStream.makeStream(of: String.self)
        try await TemporaryDirectory.with(prefix: "swarm-dial") { inbox in
            try await Session.run(configuration: Self.configuration("alice"), reactor: reactor) { alice in
                try await Session.run(configuration: Self.configuration("sam"), reactor: reactor) { sam in
                    let config = TransferConfiguration(
                        receiveDirectory: inbox.path, offerPolicy: .all, log: { _, text in line.yield(text) })
                    try await TransferEngine.run(session: alice, configuration: config) { _ in
                        let toAlice = try await sam.connect(
                            toAddress: .ipv4(.loopback, port: await alice.listenPort), timeout: .seconds(30))
                        let sender = ScriptedSender(session: sam, members: [toAlice.peerID])
                        let members =
                            [
                                SwarmMember(
                                    deviceID: alice.configuration.deviceID,
                                    address: "127.0.0.1:\(await alice.listenPort)")
                            ]
                            + listeners.enumerated().map { index, listener in
                                SwarmMember(
                                    deviceID: TestIdentity.named("fake\(index)").deviceID,
                                    address: "127.0.0.1:\(listener.localAddress.port)")
                            }
                        try await sender.send(
                            .offer(Self.swarmOffer(sender, size: Self.chunk, members: members)), to: 0)
                        let replied = await sender.collect { _, message in
                            if case .offerReply = message { true } else { false }
                        } onEach: {
                        }
                        try #require(replied, "alice replied to the offer")
                        var decided = Array(repeating: 0, count: fakes + 1)
                        var log = lines.makeAsyncIterator()
                        for round in 1...lists {
                            let list = SwarmMembers(
                                transferID: sender.transferID, members: (0...UInt16(fakes)).map { $0 })
                            try await sender.send(.swarmMembers(list), to: 0)
                            while decided[1...].contains(where: { $0 < round }), let text = await log.next() {
                                for member in 1...fakes
                                where text.contains("no link to member \(member):")
                                    || text.contains("member \(member) is not dialled")
                                    || text.contains("member \(member) at ")
                                {
                                    decided[member] += 1
                                }
                            }
                        }
                    }
                }
            }
        }
        let perMember = (1...fakes).map { accepted.count(of: $0) }
        #expect(perMember == Array(repeating: 1, count: fakes), "dials of each member: \(perMember)")
    }

    /// A member that stays to serve a broadcast of many files keeps at most `swarmReadHandles` read handles open
    /// (issue 27 point 9): sam sends alice 200 one-chunk files in a swarm of alice and bob; once every file is
    /// published alice only serves, and bob asks her for every chunk (at most K at once). Each must come back with
    /// the file's bytes, from a member that never held more than 16 of the files open at once (the engine's own count,
    /// and the descriptors of this process that point into alice's receive directory).
    @Test func aMemberServingManyFilesKeepsAtMostItsReadHandlesOpen() async throws {
        let count = 200
        let files = (0..<count).map { TestFiles.randomBytes(count: 1000 + $0, seed: UInt64(70 + $0)) }
        try await Self.withSessions(["alice", "bob", "sam"], inbox: "swarm-handles") { sessions, inbox in
            let (alice, bob, sam) = (sessions[0], sessions[1], sessions[2])
            var config = TransferConfiguration(receiveDirectory: inbox.path, offerPolicy: .all)
            config.swarmReadHandles = 16
            try await TransferEngine.run(session: alice, configuration: config) { engine in
                let toAlice = try await sam.connect(
                    toAddress: .ipv4(.loopback, port: await alice.listenPort), timeout: .seconds(30))
                let sender = ScriptedSender(session: sam, members: [toAlice.peerID])
                try await Self.sendFiles(files, sender, alice: alice, bob: bob)
                // Alice only serves now: bob asks her for every file's chunk.
                _ = await bob.vouch(for: [alice.configuration.deviceID], reason: "test")
                let link = try await bob.connect(
                    toMember: alice.configuration.deviceID, at: .ipv4(.loopback, port: await alice.listenPort),
                    timeout: .seconds(30))
                let (served, refused) = try await Self.fetch(
                    files, Array(files.indices), swarmID: sender.swarmID, from: link.peerID, bob: bob)
                #expect(served == count, "bob got \(served) of \(count) chunks from alice, each with its file's bytes")
                #expect(refused.count == 0, "alice refused \(refused.count) chunks, e.g. \(refused.first as Any)")
                // The user replaces a published file (long closed here): its name now holds bytes alice never
                // verified, which she must not serve.
                try Data(repeating: 7, count: files[0].count).write(
                    to: URL(fileURLWithPath: inbox.path + "/file-0.bin"), options: .atomic)
                let (again, refusedAgain) = try await Self.fetch(
                    files, [0], swarmID: sender.swarmID, from: link.peerID, bob: bob)
                #expect(again == 0 && refusedAgain == [0: .notHeld], "\(again) served, refused: \(refusedAgain)")
                let open = Self.openFiles(under: inbox.path)
                #expect(open <= 16, "\(open) files of alice's directory are open")
                let largest = await engine.probe.largestSwarmReaders
                #expect(largest <= 16, "alice held \(largest) read handles at once")
            }
        }
    }

    /// Offers `files` (one chunk each) to alice in a swarm of alice and bob, seeds every chunk to her, and ends each
    /// file once she acknowledged it; returns when every file's result is in.
    static func sendFiles(_ files: [[UInt8]], _ sender: ScriptedSender, alice: Session, bob: Session) async throws {
        let members = [
            SwarmMember(deviceID: alice.configuration.deviceID, address: "127.0.0.1:\(await alice.listenPort)"),
            SwarmMember(deviceID: bob.configuration.deviceID, address: ""),
        ]
        let offer = Offer(
            transferID: sender.transferID, chunkSize: UInt32(chunk), codecs: [],
            files: files.indices.map { index in
                OfferedFile(
                    path: "file-\(index).bin", size: UInt64(files[index].count),
                    modificationTime: FileTime(seconds: 0, nanoseconds: 0))
            },
            swarm: Swarm(swarmID: sender.swarmID, members: members))
        try await sender.send(.offer(offer), to: 0)
        // Counted by kind: 0 the reply, 1 the files published. By file: acknowledged, and ended (fileEnd sent).
        let seen = Counts()
        let acked = Counts()
        let ended = Counts()
        let seeded = Step()
        let finished = await sender.collect { _, message in
            switch message {
            case .offerReply: seen.add(0)
            case .chunkAck(let ack): acked.add(Int(ack.fileIndex))
            case .fileResult(let result) where result.status == .published: seen.add(1)
            default: break
            }
            return seen.count(of: 1) == files.count
        } onEach: {
            if seen.count(of: 0) == 1, seeded.once() {
                try await sender.send(
                    .swarmMembers(SwarmMembers(transferID: sender.transferID, members: [0, 1])), to: 0)
                for (index, data) in files.enumerated() {
                    let digests = ChunkDigests(
                        transferID: sender.transferID, fileIndex: UInt32(index), firstChunk: 0,
                        entries: [ChunkDigests.Entry(seed: 0, sha256: FileDigest.chunkDigest(data))])
                    try await sender.send(.chunkDigests(digests), to: 0)
                    let header = Chunk.frameHeader(
                        transferID: sender.transferID, fileIndex: UInt32(index), offset: 0,
                        rawLength: UInt32(data.count), codec: .none, sha256: FileDigest.chunkDigest(data),
                        dataLength: data.count)
                    try await sender.session.sendTransferFrame([header, data], to: sender.members[0])
                }
            }
            // Each file acknowledged gets its fileEnd, once.
            for index in files.indices where acked.count(of: index) == 1 && ended.count(of: index) == 0 {
                ended.add(index)
                let end = FileEnd(
                    transferID: sender.transferID, fileIndex: UInt32(index),
                    digest: FileDigest.of(files[index], chunkSize: chunk))
                try await sender.send(.fileEnd(end), to: 0)
            }
        }
        #expect(finished, "alice published every file: \(seen.count(of: 1)) of \(files.count)")
    }

    /// Asks alice, over bob's link, for the one chunk of each file of `wanted`, at most K at once (a `busy` refusal
    /// is asked again); returns how many came with their file's bytes, and the other refusals.
    static func fetch(
        _ files: [[UInt8]], _ wanted: [Int], swarmID: SwarmID, from alice: PeerID, bob: Session
    ) async throws -> (served: Int, refused: [Int: SwarmRefuseReason]) {
        var waiting = Array(wanted.reversed())
        var outstanding: Set<Int> = []
        var served = 0
        var refused: [Int: SwarmRefuseReason] = [:]
        func ask() async throws {
            while outstanding.count < Limits.maxSwarmRequestsInFlight, let file = waiting.popLast() {
                outstanding.insert(file)
                let request = SwarmRequest(swarmID: swarmID, fileIndex: UInt32(file), chunkIndex: 0, codecs: [])
                try await bob.sendTransferFrame([TransferMessage.swarmRequest(request).frame.encoded()], to: alice)
            }
        }
        try await ask()
        for await event in bob.transferEvents {
            guard case .frame(let frame, let peer) = event, peer == alice,
                let message = try? TransferMessage(frame: frame)
            else { continue }
            switch message {
            case .chunk(let chunk) where outstanding.remove(Int(chunk.fileIndex)) != nil:
                if Array(chunk.data) == files[Int(chunk.fileIndex)] { served += 1 }
            case .swarmRefuse(let refuse) where outstanding.remove(Int(refuse.fileIndex)) != nil:
                if refuse.reason == .busy {
                    waiting.append(Int(refuse.fileIndex))
                } else {
                    refused[Int(refuse.fileIndex)] = refuse.reason
                }
            default: continue
            }
            if waiting.isEmpty, outstanding.isEmpty { break }
            try await ask()
        }
        return (served, refused)
    }

    /// Descriptors of this process open on a file under `path` (its directories left out).
    static func openFiles(under path: String) -> Int {
        let root = URL(fileURLWithPath: path).resolvingSymlinksInPath().path
        let descriptors = (try? FileManager.default.contentsOfDirectory(atPath: "/proc/self/fd")) ?? []
        return descriptors.count { descriptor in
            guard let target = try? FileManager.default.destinationOfSymbolicLink(atPath: "/proc/self/fd/\(descriptor)")
            else { return false }
            return target.hasPrefix(root + "/") && target != root + "/.ferry-staging"
        }
    }

    /// Resume per receiver in a swarm (PROTOCOL.md 11.11 rules 3 and 4): alice holds half the file from an interrupted
    /// transfer and replies with that resume offset; the sender seeds nothing of that half (alice is its seed), and
    /// bob gets it from alice once she has checked her staged prefix against the sender's digests.
    @Test func aResumedPrefixIsCheckedThenServedToTheOthers() async throws {
        let data = TestFiles.randomBytes(count: 4 * Self.chunk, seed: 64)
        let reactor = try Reactor()
        defer { reactor.shutdown() }
        try await TemporaryDirectory.with(prefix: "swarm-a") { inboxA in
            try await TemporaryDirectory.with(prefix: "swarm-b") { inboxB in
                try await Session.run(configuration: Self.configuration("alice"), reactor: reactor) { alice in
                    try await Session.run(configuration: Self.configuration("bob"), reactor: reactor) { bob in
                        try await Session.run(configuration: Self.configuration("sam"), reactor: reactor) { sam in
                            let a = TransferConfiguration(receiveDirectory: inboxA.path, offerPolicy: .all)
                            let b = TransferConfiguration(receiveDirectory: inboxB.path, offerPolicy: .all)
                            try await TransferEngine.run(session: alice, configuration: a) { _ in
                                try await TransferEngine.run(session: bob, configuration: b) { _ in
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
                                    let sender = ScriptedSender(session: sam, members: [toAlice.peerID, toBob.peerID])
                                    try await Self.runResumedSwarm(
                                        sender, data: data,
                                        members: [
                                            SwarmMember(
                                                deviceID: alice.configuration.deviceID,
                                                address: "127.0.0.1:\(await alice.listenPort)"),
                                            SwarmMember(
                                                deviceID: bob.configuration.deviceID,
                                                address: "127.0.0.1:\(await bob.listenPort)"),
                                        ])
                                }
                            }
                        }
                    }
                }
                for inbox in [inboxA, inboxB] {
                    let received = try [UInt8](Data(contentsOf: URL(fileURLWithPath: inbox.path + "/swarm.bin")))
                    let same = received == data
                    #expect(same, "the published file in \(inbox.path) is the sent one")
                }
            }
        }
    }

    /// The resumed broadcast: chunks 0-1 are alice's (her prefix), 2-3 are seeded to bob; bob must store 0-1 from
    /// alice and alice 2-3 from bob.
    static func runResumedSwarm(_ sender: ScriptedSender, data: [UInt8], members: [SwarmMember]) async throws {
        let seen = Seen()
        let offer = swarmOffer(sender, size: data.count, codecs: [.zlib], members: members)
        for member in 0..<2 { try await sender.send(.offer(offer), to: member) }
        let seeded = Step()
        let ended = Step()
        let finished = await sender.collect { member, message in
            seen.record(member, message)
            return seen.read { $0.results.count == 2 }
        } onEach: {
            if seen.read({ $0.replies.count == 2 }), seeded.once() {
                #expect(seen.read { $0.replies[0]?.files.first?.resumeOffset } == UInt64(2 * chunk))
                #expect(seen.read { $0.replies[0]?.relay } == true)
                for member in 0..<2 {
                    let list = SwarmMembers(transferID: sender.transferID, members: [0, 1])
                    try await sender.send(.swarmMembers(list), to: member)
                }
                let entries = (0..<4).map { index in
                    ChunkDigests.Entry(
                        seed: index < 2 ? 0 : 1,
                        sha256: FileDigest.chunkDigest(data[index * chunk..<(index + 1) * chunk]))
                }
                let digests = ChunkDigests(transferID: sender.transferID, fileIndex: 0, firstChunk: 0, entries: entries)
                for member in 0..<2 { try await sender.send(.chunkDigests(digests), to: member) }
                for index in 2..<4 { try await sender.sendChunk(data, index: index, to: 1) }
            }
            if seen.read({ $0.acks[0]?.count == 2 && $0.acks[1]?.count == 4 }), ended.once() {
                let end = FileEnd(
                    transferID: sender.transferID, fileIndex: 0, digest: FileDigest.of(data, chunkSize: chunk))
                for member in 0..<2 { try await sender.send(.fileEnd(end), to: member) }
            }
        }
        #expect(finished, "both members sent their result")
        let aliceAcks = seen.read { $0.acks[0] } ?? [:]
        let bobAcks = seen.read { $0.acks[1] } ?? [:]
        #expect(aliceAcks == [UInt64(2 * chunk): .storedFromPeer, UInt64(3 * chunk): .storedFromPeer], "\(aliceAcks)")
        #expect(
            bobAcks == [
                0: .storedFromPeer, UInt64(chunk): .storedFromPeer, UInt64(2 * chunk): .stored,
                UInt64(3 * chunk): .stored,
            ], "\(bobAcks)")
        for member in 0..<2 { #expect(seen.read { $0.results[member]?.status } == .published) }
    }

    /// Offers one file to both members with a swarm, seeds even chunks to member 0 and odd ones to member 1, and
    /// checks that each member stored the other's chunks from it (`storedFromPeer`) and published the file. One loop
    /// reads what the members send and answers as a sender would, step by step.
    static func runSwarm(_ sender: ScriptedSender, data: [UInt8], chunks: Int, members: [SwarmMember]) async throws {
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
                for member in 0..<2 {
                    let reply = try #require(seen.read { $0.replies[member] })
                    #expect(reply.accepted && reply.relay, "member \(member) replies relay: \(reply)")
                    let list = SwarmMembers(transferID: sender.transferID, members: [0, 1])
                    try await sender.send(.swarmMembers(list), to: member)
                }
                let entries = (0..<chunks).map { index in
                    ChunkDigests.Entry(
                        seed: UInt16(index % 2),
                        sha256: FileDigest.chunkDigest(data[index * chunk..<min(data.count, (index + 1) * chunk)]))
                }
                let digests = ChunkDigests(transferID: sender.transferID, fileIndex: 0, firstChunk: 0, entries: entries)
                for member in 0..<2 { try await sender.send(.chunkDigests(digests), to: member) }
                for index in 0..<chunks { try await sender.sendChunk(data, index: index, to: index % 2) }
            }
            if seen.read({ $0.acks[0]?.count == chunks && $0.acks[1]?.count == chunks }), ended.once() {
                let end = FileEnd(
                    transferID: sender.transferID, fileIndex: 0, digest: FileDigest.of(data, chunkSize: chunk))
                for member in 0..<2 { try await sender.send(.fileEnd(end), to: member) }
            }
        }
        #expect(finished, "both members sent their result")
        for member in 0..<2 {
            let acks = seen.read { $0.acks[member] } ?? [:]
            for index in 0..<chunks {
                let expected: ChunkStatus = index % 2 == member ? .stored : .storedFromPeer
                #expect(acks[UInt64(index * chunk)] == expected, "member \(member), chunk \(index): \(acks)")
            }
            #expect(seen.read { $0.results[member]?.status } == .published)
        }
        #expect(seen.read { $0.other }.isEmpty, "nothing else reached the sender: \(seen.read { $0.other })")
    }

    /// Counts by key, under a lock.
    final class Counts: @unchecked Sendable {
        private let lock = NSLock()
        private var counts: [Int: Int] = [:]

        func add(_ key: Int) {
            lock.lock()
            defer { lock.unlock() }
            counts[key, default: 0] += 1
        }

        func count(of key: Int) -> Int {
            lock.lock()
            defer { lock.unlock() }
            return counts[key, default: 0]
        }
    }

    /// A step of the script that runs once.
    final class Step: @unchecked Sendable {
        private var done = false
        /// True the first time only.
        func once() -> Bool {
            defer { done = true }
            return !done
        }
    }
}
