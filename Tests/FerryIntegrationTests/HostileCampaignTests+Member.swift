import FerrySecurity
import FerrySession
import FerrySystem
import FerryTestSupport
import FerryWire
import Foundation
import Testing

extension IntegrationTests.HostileCampaignTests {
    /// Files of one chunk Sam sends Alice (so she holds them, verified, and serves them).
    static let smallFiles = 256
    static let chunkSize = Limits.minChunkSize
    /// Chunks of the 16 GiB file of Sam's offer (never sent).
    static let bigChunks = 1 << 18
    /// The staged prefix Alice checks when Sam offers `resume.bin` again (sparse: it takes no disk).
    static let resumedSize: UInt64 = 8 << 30
    /// Loopback listeners named as members, which count the connections they get.
    static let listeners = 16

    /// The member misdeeds against Alice (`ferry receive --accept all -v -v`), a member of a swarm that Sam (a
    /// scripted sender in this process) offers her: a 16 GiB file (never sent) and 256 files of 64 KiB (sent, so she
    /// holds and serves them). Members: Alice, Mallory, Trudy (hostile members here), the listeners and addresses of
    /// (8). Each misdeed in turn; the figures after each.
    func memberAsVictim(_ figures: CampaignFigures) async throws {
        let transfer = try await onOwnThread { try TransferHarness("campaign-member") }
        let (alice, port) = try transfer.receiver("alice", once: false, ["-v", "-v"])
        defer { alice.kill() }
        let small = try transfer.files.random("small.bin", size: 1024)
        let files = (0..<Self.smallFiles).map { index in
            var generator = SplitMix64(seed: UInt64(index) + 1)
            return (0..<Self.chunkSize).map { _ in UInt8(truncatingIfNeeded: generator.next()) }
        }

        let reactor = try Reactor()
        defer { reactor.shutdown() }
        var counted = try (0..<Self.listeners).map { _ in try reactor.listenTCP(on: .ipv4(.loopback, port: 0)) }
        let named = try reactor.listenTCP(on: .ipv4(.loopback, port: 0))  // listed as "localhost:PORT"
        counted.append(named)
        // Listed as "[::1]:PORT"; where IPv6 is off, the host name and the foreign addresses still show the rule.
        let sixListener = try? reactor.listenTCP(on: .ipv6(.loopback, port: 0, scopeID: 0))
        if let sixListener { counted.append(sixListener) }
        let accepted = IntegrationTests.SwarmHostileTests.Accepted(count: counted.count)
        let acceptors = counted.enumerated().map { index, listener in
            Task {
                while let connection = try? await listener.accept() {
                    accepted.add(index)
                    connection.close()
                }
            }
        }
        defer {
            for listener in counted { listener.close() }
            for acceptor in acceptors { acceptor.cancel() }
        }

        let session = transfer.session
        try await HostileSwarmMember.run(sessionID: session, name: "sam", behaviour: .honest) { sam in
            try await HostileSwarmMember.run(sessionID: session, name: "mallory", behaviour: .honest) { mallory in
                try await HostileSwarmMember.run(sessionID: session, name: "trudy", behaviour: .honest) { trudy in
                    try await HostileSwarmMember.run(sessionID: session, name: "oscar", behaviour: .honest) { oscar in
                        let toAlice = try await sam.connect(toPort: port)
                        let aliceID = try #require(await sam.session.peer(toAlice)?.deviceID)
                        // Members: 0 Alice, 1 Mallory, 2 Trudy, then the counted listeners, then addresses never
                        // dialled whatever is there: a foreign network, port 0.
                        var members = [
                            SwarmMember(deviceID: aliceID, address: "127.0.0.1:\(port)"),
                            SwarmMember(deviceID: mallory.deviceID, address: ""),
                            SwarmMember(deviceID: trudy.deviceID, address: ""),
                        ]
                        for (index, listener) in counted.enumerated() {
                            let port = listener.localAddress.port
                            let address =
                                switch index {
                                case Self.listeners: "localhost:\(port)"
                                case Self.listeners + 1: "[::1]:\(port)"
                                default: "127.0.0.1:\(port)"
                                }
                            members.append(
                                SwarmMember(deviceID: try DeviceIdentity.generate().deviceID, address: address))
                        }
                        let firstCounted = 3
                        let foreign = members.count
                        members.append(
                            SwarmMember(deviceID: try DeviceIdentity.generate().deviceID, address: "192.0.2.7:4100"))
                        members.append(
                            SwarmMember(deviceID: try DeviceIdentity.generate().deviceID, address: "127.0.0.1:0"))
                        let swarmID = SwarmID.random()
                        let transferID = TransferID.random()
                        let time = FileTime(seconds: 0, nanoseconds: 0)
                        let offer = Offer(
                            transferID: transferID, chunkSize: UInt32(Self.chunkSize), codecs: [],
                            files: [
                                OfferedFile(
                                    path: "big.bin", size: UInt64(Self.bigChunks) * UInt64(Self.chunkSize),
                                    modificationTime: time)
                            ]
                                + (0..<Self.smallFiles).map { index in
                                    OfferedFile(
                                        path: "small-\(index).bin", size: UInt64(Self.chunkSize),
                                        modificationTime: time)
                                },
                            swarm: Swarm(swarmID: swarmID, members: members))
                        try await sam.session.sendTransferFrame(
                            [TransferMessage.offer(offer).encoded()], to: toAlice)
                        let replied = await sam.waitFor {
                            if case .message(.offerReply, _, _) = $0 { true } else { false }
                        }
                        guard case .message(.offerReply(let reply), _, _)? = replied else {
                            Issue.record("Alice did not reply to the offer: \(alice.capturedOutput())")
                            return
                        }
                        try #require(reply.accepted && reply.relay, "Alice takes part in the swarm: \(reply)")

                        // Sam sends the small files (digest, chunk, end); Alice publishes each.
                        for (offset, bytes) in files.enumerated() {
                            let index = UInt32(offset + 1)
                            let digest = FileDigest.chunkDigest(bytes)
                            let digests = ChunkDigests(
                                transferID: transferID, fileIndex: index, firstChunk: 0,
                                entries: [ChunkDigests.Entry(seed: 0, sha256: digest)])
                            try await sam.session.sendTransferFrame(
                                [TransferMessage.chunkDigests(digests).encoded()], to: toAlice)
                            let header = Chunk.frameHeader(
                                transferID: transferID, fileIndex: index, offset: 0, rawLength: UInt32(bytes.count),
                                codec: .none, sha256: digest, dataLength: bytes.count)
                            try await sam.session.sendTransferFrame([header, bytes], to: toAlice)
                            let end = FileEnd(
                                transferID: transferID, fileIndex: index,
                                digest: FileDigest.of(bytes, chunkSize: Self.chunkSize))
                            try await sam.session.sendTransferFrame(
                                [TransferMessage.fileEnd(end).encoded()], to: toAlice)
                        }
                        var from = 0
                        for _ in 0..<Self.smallFiles {
                            let result = await sam.waitFor(from: from) { observation in
                                if case .message(.fileResult, _, _) = observation { true } else { false }
                            }
                            guard let result, case .message(.fileResult(let fileResult), _, _) = result.observation
                            else {
                                Issue.record("Alice did not publish every small file: \(alice.capturedOutput())")
                                return
                            }
                            #expect(fileResult.status == .published, "\(fileResult)")
                            from = result.index + 1
                        }

                        // (8) Three lists naming every member; each decision of Alice's is awaited in her log.
                        let dialled = try await listsNameAddressesOfTheSendersChoosing(
                            sam: sam, to: toAlice, transferID: transferID, alice: alice, members: members.count,
                            counted: firstCounted..<(firstCounted + counted.count), foreign: foreign,
                            accepted: accepted, figures: figures)
                        let loopback = Array(dialled[0..<Self.listeners])
                        #expect(loopback.allSatisfy { $0 == 1 }, "each loopback member dialled once: \(loopback)")
                        #expect(
                            dialled[Self.listeners...].allSatisfy { $0 == 0 },
                            "a host name and ::1 (the sender is on 127.0.0.1) are never dialled: \(dialled)")

                        // Mallory links up with Alice as a member (Alice vouched for her) and asks for chunks.
                        _ = await mallory.session.vouch(for: [aliceID], reason: "a member of Sam's broadcast")
                        let link = try await mallory.session.connect(
                            toMember: aliceID, at: .ipv4(.loopback, port: UInt16(port)), timeout: .seconds(30)
                        ).peerID
                        try await manyFilesServed(
                            mallory: mallory, link: link, swarmID: swarmID, alice: alice, figures: figures)
                        try await announcementsOverAHugeFile(
                            mallory: mallory, link: link, swarmID: swarmID, alice: alice, port: port,
                            transfer: transfer, small: small.path, figures: figures)
                        try await requestsFloodedAndReadSlowly(
                            trudy: trudy, aliceID: aliceID, port: port, swarmID: swarmID, alice: alice,
                            figures: figures)
                        try await largeFramesWhileTheEngineIsBusy(
                            sam: sam, oscar: oscar, toAlice: toAlice, port: port, inbox: transfer.inbox.path,
                            alice: alice, figures: figures)
                        #expect(alice.isRunning, "Alice survived the campaign: \(alice.capturedOutput())")
                        let cancel = TransferCancel(transferID: transferID, reason: .cancelledByUser)
                        try? await sam.session.sendTransferFrame(
                            [TransferMessage.cancel(cancel).encoded()], to: toAlice)
                    }
                }
            }
        }
        try alice.terminate()
    }

    /// (8) Sam's `swarmMembers`, naming every member, three times; each goes once Alice's log (`-v -v`) has decided
    /// on every listed address for the list before (a failed dial, a dial not made), so that a dial still under way
    /// never hides one. Returns the connections each counted listener got.
    func listsNameAddressesOfTheSendersChoosing(
        sam: HostileSwarmMember, to alice: PeerID, transferID: TransferID, alice process: FerryProcess, members: Int,
        counted: Range<Int>, foreign: Int, accepted: IntegrationTests.SwarmHostileTests.Accepted,
        figures: CampaignFigures
    ) async throws -> [Int] {
        let lists = 3
        let before = try VictimSample.of(process.pid)
        // Members Alice logs a decision for: the loopback listeners and the two addresses off her network; not the
        // host name (never looked up, so not logged) nor ::1 (not a candidate with the sender on 127.0.0.1).
        let logged = Array(counted.prefix(Self.listeners)) + [foreign, foreign + 1]
        var decided = [Int: Int]()
        for round in 1...lists {
            let list = SwarmMembers(transferID: transferID, members: (0..<UInt16(members)).map { $0 })
            try await sam.session.sendTransferFrame([TransferMessage.swarmMembers(list).encoded()], to: alice)
            decided = try await onOwnThread { [decided] in
                var decided = decided
                while logged.contains(where: { decided[$0, default: 0] < round }) {
                    let line = try process.waitForErrorLine(timeout: .seconds(60)) { $0.contains("member ") }
                    for member in logged
                    where line.contains("no link to member \(member):")
                        || line.contains("member \(member) is not dialled")
                        || line.contains("member \(member) at ")
                    {
                        decided[member, default: 0] += 1
                    }
                }
                return decided
            }
        }
        let dials = accepted.counts
        let after = try VictimSample.of(process.pid)
        let offNetwork = process.allStderrLines.filter {
            $0.contains("member \(foreign) at") || $0.contains("member \(foreign + 1) at")
        }
        let loopback = dials.prefix(Self.listeners)
        let sixDials = dials.count > Self.listeners + 1 ? "\(dials[Self.listeners + 1])" : "n/a"
        figures.add(
            "8 \(lists) lists naming \(members) members", victim: "ferry receive", before: before, after: after,
            note: "dials per loopback member \(Set(loopback).sorted()) (\(loopback.reduce(0, +)) in all), host name "
                + "\(dials[Self.listeners]), ::1 \(sixDials), foreign and port 0: \(offNetwork.count) refusals logged")
        #expect(
            offNetwork.count == 2 * lists,
            "192.0.2.7 and port 0 are refused after each list: \(offNetwork)")
        return dials
    }

    /// (9) Mallory asks Alice for the chunk of each of the 256 small files, 4 at a time (more would be refused
    /// `busy`); Alice's descriptors are counted after each answer. Before issue 27 a member held a read handle per
    /// file until it left the swarm.
    func manyFilesServed(
        mallory: HostileSwarmMember, link: PeerID, swarmID: SwarmID, alice: FerryProcess, figures: CampaignFigures
    ) async throws {
        let before = try VictimSample.of(alice.pid)
        var peak = before.descriptors
        var asked = 0
        var answered = 0
        var from = await mallory.observations.count
        var chunks = 0
        while answered < Self.smallFiles {
            while asked < Self.smallFiles, asked - answered < Limits.maxSwarmRequestsInFlight {
                try await mallory.request(swarmID, file: UInt32(asked + 1), chunks: [0], of: link)
                asked += 1
            }
            let answer = await mallory.waitFor(from: from, timeout: .seconds(60)) { observation in
                switch observation {
                case .message(.chunk, link, _), .message(.swarmRefuse, link, _), .linkDown(link, _, _): true
                default: false
                }
            }
            guard let answer else {
                Issue.record("Alice stopped answering Mallory after \(answered): \(alice.capturedOutput())")
                return
            }
            from = answer.index + 1
            switch answer.observation {
            case .message(.chunk, _, _):
                chunks += 1
            case .message(.swarmRefuse(let refuse), _, _):
                Issue.record("Alice refused a chunk she holds: \(refuse)")
            default:
                Issue.record("Alice closed Mallory's link: \(alice.capturedOutput())")
                return
            }
            answered += 1
            peak = max(peak, try VictimSample.of(alice.pid).descriptors)
        }
        let after = try VictimSample.of(alice.pid)
        figures.add(
            "9 asks for a chunk of each of 256 files", victim: "ferry receive", before: before, after: after,
            descriptorPeak: peak, note: "\(chunks) chunks served")
        #expect(chunks == Self.smallFiles, "every chunk was served")
        #expect(
            peak - before.descriptors <= Self.readHandleBound,
            "Alice's descriptors while serving 256 files: \(before.descriptors) before, at most \(peak)")
    }

    /// (3) Mallory sends 200 `swarmHave` frames of 1024 overlapping ranges over the 16 GiB file while an ordinary
    /// `ferry send` of 1 KiB to Alice starts; it lands. A request of Mallory's answered after the frames shows that
    /// Alice took every one of them. Before issue 27 one such frame grew a member past 1 GiB in 1.2 s.
    func announcementsOverAHugeFile(
        mallory: HostileSwarmMember, link: PeerID, swarmID: SwarmID, alice: FerryProcess, port: Int,
        transfer: TransferHarness, small: String, figures: CampaignFigures
    ) async throws {
        let before = try VictimSample.of(alice.pid)
        let sender = try transfer.sender([small], to: [port])
        let ranges = (0..<Limits.maxSwarmEntriesPerFrame).map { UInt64($0)..<UInt64(Self.bigChunks - $0) }
        let flood = TransferMessage.swarmHave(SwarmHave(swarmID: swarmID, fileIndex: 0, ranges: ranges)).encoded()
        for _ in 0..<200 { try await mallory.session.sendTransferFrame([flood], to: link) }
        let from = await mallory.observations.count
        try await mallory.request(swarmID, file: 1, chunks: [0], of: link)
        let answered = await mallory.waitFor(from: from, timeout: .seconds(60)) { observation in
            if case .message(.chunk, link, _) = observation { true } else { false }
        }
        #expect(answered != nil, "Alice answered Mallory after her announcements: \(alice.capturedOutput())")
        // A send that has not landed within a minute is a failure, with the figures.
        let status = (try? await sender.exitStatus(timeout: .seconds(60))) ?? -1
        let landed = status == 0 && SwarmHarness.identical(transfer.inbox.path + "/small.bin", small)
        let after = try VictimSample.of(alice.pid)
        let outcome = landed ? "landed" : status < 0 ? "not done in 60 s" : "failed (\(status))"
        figures.add(
            "3 200 swarmHave x 1024 ranges, 16 GiB", victim: "ferry receive", before: before, after: after,
            note: "a 1 KiB ferry send meanwhile: \(outcome); Mallory's request after the frames "
                + (answered == nil ? "not answered in 60 s" : "answered"))
        #expect(landed, "the ordinary send landed: \(sender.capturedOutput())")
        #expect(after.peak < Self.peakBound, "Alice's peak memory: \(after.peak >> 20) MiB")
    }

    /// (6) Trudy, a member whose link to Alice goes through a proxy that relays Alice's bytes at 128 KiB/s (it holds
    /// each 64 KiB for 500 ms), sends 100,000 requests for chunks Alice holds, at full speed. Alice serves 4 at a time
    /// while her link to Trudy holds less than 4 MiB unsent and refuses the rest `busy`; the frames she queues for
    /// Trudy as a member stay within 4 MiB + 4 chunks + 256 KiB, and Trudy, who asks faster than she reads, is cut
    /// off (Alice's log says so, her link closes) long before the writer's stall deadline could do it. Before issue
    /// 27 those frames were queued without a limit.
    func requestsFloodedAndReadSlowly(
        trudy: HostileSwarmMember, aliceID: DeviceID, port: Int, swarmID: SwarmID, alice: FerryProcess,
        figures: CampaignFigures
    ) async throws {
        let proxy = try FaultProxy(
            targetPort: UInt16(port), mode: .delayOneWay(.milliseconds(500), direction: .serverToClient))
        defer { proxy.close() }
        _ = await trudy.session.vouch(for: [aliceID], reason: "a member of Sam's broadcast")
        let link = try await trudy.session.connect(
            toMember: aliceID, at: .ipv4(.loopback, port: proxy.port), timeout: .seconds(30)
        ).peerID
        let before = try VictimSample.of(alice.pid)
        let requests = 100_000
        var sent = 0
        for index in 0..<requests {
            let request = SwarmRequest(
                swarmID: swarmID, fileIndex: UInt32(index % Self.smallFiles + 1), chunkIndex: 0, codecs: [])
            let frame = TransferMessage.swarmRequest(request).encoded()
            guard (try? await trudy.session.sendTransferFrame([frame], to: link)) != nil else { break }  // cut off
            sent += 1
        }
        let cutOff = try? await onOwnThread {
            try alice.waitForErrorLine(timeout: .seconds(60)) { $0.contains("member trudy cut off") }
        }
        let closed = await trudy.waitFor(timeout: .seconds(60)) { observation in
            if case .linkDown(link, _, _) = observation { true } else { false }
        }
        let after = try VictimSample.of(alice.pid)
        let chunks = await trudy.observations.filter { observation in
            if case .message(.chunk, link, _) = observation { true } else { false }
        }.count
        figures.add(
            "6 floods requests, reads 128 KiB/s", victim: "ferry receive", before: before, after: after,
            note: "\(sent) requests sent, \(chunks) chunks read; "
                + (cutOff == nil ? "not cut off in 60 s" : "cut off, link \(closed == nil ? "open" : "closed")"))
        #expect(cutOff != nil, "Trudy, who asks faster than she reads, is cut off: \(alice.capturedOutput())")
        #expect(closed != nil, "Trudy's link is closed")
        #expect(after.peak < Self.peakBound, "Alice's peak memory: \(after.peak >> 20) MiB")
    }

    /// (4) Sam offers `resume.bin` (8 GiB), whose staged data is there already (a sparse file planted in Alice's
    /// staging folder under its resume key): accepting it, Alice's engine reads and hashes the whole prefix and takes
    /// no frame meanwhile. While it does (her reads are seen growing), Oscar, an ordinary peer, sends 300 frames of
    /// 1 MiB (chunks of no transfer: the first one the engine takes closes his link). Alice reads at most 64 MiB of
    /// them before the engine takes one; before issue 27 her link reader read them all into memory.
    func largeFramesWhileTheEngineIsBusy(
        sam: HostileSwarmMember, oscar: HostileSwarmMember, toAlice: PeerID, port: Int, inbox: String,
        alice: FerryProcess, figures: CampaignFigures
    ) async throws {
        let toOscar = try await oscar.connect(toPort: port)
        let file = OfferedFile(path: "resume.bin", size: Self.resumedSize, modificationTime: FileTime(seconds: 0))
        let transferID = TransferID.random()
        let key = ResumeKey.make(sender: sam.deviceID, file: file, chunkSize: UInt32(Self.chunkSize))
        let staged = "\(inbox)/.ferry-staging/\(key)"
        try #require(FileManager.default.createFile(atPath: staged, contents: nil))
        let handle = try FileHandle(forWritingTo: URL(fileURLWithPath: staged))
        try handle.truncate(atOffset: Self.resumedSize)
        try handle.close()

        let before = try VictimSample.of(alice.pid)
        let readBefore = try VictimSample.bytesRead(by: alice.pid)
        let offer = Offer(transferID: transferID, chunkSize: UInt32(Self.chunkSize), codecs: [], files: [file])
        try await sam.session.sendTransferFrame([TransferMessage.offer(offer).encoded()], to: toAlice)
        // The engine is busy once Alice has read 256 MiB of the prefix (7.75 GiB to go). Nothing tells of it but the
        // bytes she read (/proc/PID/io), so they are looked at every 2 ms until then: a wait for a condition, with a
        // deadline as the failure guard.
        let busy = try await onOwnThread {
            let deadline = ContinuousClock.now + .seconds(60)
            while ContinuousClock.now < deadline {
                if try VictimSample.bytesRead(by: alice.pid) - readBefore >= 256 << 20 { return true }
                usleep(2_000)
            }
            return false
        }
        try #require(busy, "Alice never started checking the resumed prefix: \(alice.capturedOutput())")
        let frame = [UInt8](repeating: 0x4F, count: 1 << 20)
        let header = Chunk.frameHeader(
            transferID: .random(), fileIndex: 0, offset: 0, rawLength: UInt32(frame.count), codec: .none,
            sha256: FileDigest.chunkDigest(frame), dataLength: frame.count)
        let flood = Task {
            var sent = 0
            for _ in 0..<300 {
                guard (try? await oscar.session.sendTransferFrame([header, frame], to: toOscar)) != nil else { break }
                sent += 1
            }
            return sent
        }
        let closed = await oscar.waitFor(timeout: .seconds(120)) { observation in
            if case .linkDown(toOscar, _, _) = observation { true } else { false }
        }
        let sent = await flood.value
        let replied = await sam.waitFor(timeout: .seconds(120)) { observation in
            if case .message(.offerReply(let reply), _, _) = observation {
                reply.transferID == transferID
            } else {
                false
            }
        }
        let after = try VictimSample.of(alice.pid)
        let hashed = try VictimSample.bytesRead(by: alice.pid) - readBefore
        figures.add(
            "4 300 frames of 1 MiB, engine busy", victim: "ferry receive", before: before, after: after,
            note:
                "\(sent) of 300 frames left the peer before its link closed; \(hashed >> 20) MiB of a resumed prefix"
                + " read; "
                + "link \(closed == nil ? "open" : "closed at the first frame taken")")
        #expect(closed != nil, "Oscar's chunk of no transfer closed his link: \(alice.capturedOutput())")
        #expect(replied != nil, "Alice answered the offer once the prefix was checked")
        #expect(after.peak < Self.peakBound, "Alice's peak memory: \(after.peak >> 20) MiB")
        let cancel = TransferCancel(transferID: transferID, reason: .cancelledByUser)
        try? await sam.session.sendTransferFrame([TransferMessage.cancel(cancel).encoded()], to: toAlice)
    }
}
