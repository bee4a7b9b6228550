import FerrySecurity
import FerrySession
import FerrySystem
import FerryTestSupport
import FerryWire
import Foundation
import Testing

extension IntegrationTests {
    /// A broadcast whose swarm has a hostile member, or an outsider asking a member for chunks (issue 12, PROTOCOL.md
    /// 11.11 rules 1, 4 and 5): real `ferry send` and `ferry receive` processes on loopback, Mallory in this process
    /// (`HostileSwarmMember`, a real session with a device ID of its own).
    @Suite(.serialized) struct SwarmHostileTests {
        /// What Mallory does wrong, and the words of the case.
        enum Misdeed: String, CaseIterable, Sendable, CustomTestStringConvertible {
            /// Relays every chunk asked of it with one bit flipped (and a `sha256` field that matches the flipped
            /// bytes: only the sender's digest shows the lie).
            case flipsBits
            /// Announces every chunk as soon as its digest comes, held or not, and answers every request with random
            /// bytes.
            case announcesWhatItLacks
            /// Relays true bytes, but pushes a chunk nobody asked for to every member.
            case pushesUnrequestedChunks

            var behaviour: HostileSwarmMember.Behaviour {
                switch self {
                case .flipsBits: .flipper
                case .announcesWhatItLacks: .init(flipBytes: false, announceUnheld: true)
                case .pushesUnrequestedChunks: .init(flipBytes: false, sendUnrequested: true)
                }
            }

            var testDescription: String { rawValue }
        }

        /// Broadcasts tried before a test gives up on Mallory being asked for anything.
        static let attempts = 4

        /// Whether a member asks Mallory for a chunk at all is up to the swarm's schedule: the sender seeds each
        /// chunk to the member with the least in flight, and Mallory, in this process, acknowledges slower than the
        /// receivers on a loaded machine, so it may seed nothing. A broadcast in which nobody asked it still checks
        /// every file and exit status, and the next broadcast tries again; one in which it served anything (always a
        /// lie, as each misdeed is played) must end with Mallory cut off.
        @Test(arguments: Misdeed.allCases)
        func aRelayerThatLiesIsCutOffWhileTheOthersFinish(misdeed: Misdeed) async throws {
            for attempt in 1...Self.attempts {
                guard try await broadcast(misdeed, attempt: attempt) else { continue }
                return
            }
            Issue.record("in \(Self.attempts) broadcasts no member asked Mallory for anything")
        }

        /// One broadcast to Alice, Bob and Mallory; false when Mallory was never asked (its misdeed not played).
        private func broadcast(_ misdeed: Misdeed, attempt: Int) async throws -> Bool {
            let swarm = try await onOwnThread {
                try SwarmHarness(["alice", "bob"], test: "hostile-\(misdeed)-\(attempt)")
            }
            let file = try swarm.transfer.files.random("swarm.bin", size: 24 << 20 + 12_345)
            return try await HostileSwarmMember.run(
                sessionID: swarm.transfer.session, name: "mallory", behaviour: misdeed.behaviour
            ) { mallory in
                let port = Int(await mallory.port)
                let sender = try swarm.transfer.sender([file.path], to: swarm.ports + [port], ["--compress", "none"])
                let offered = await mallory.waitFor { if case .offer = $0 { true } else { false } }
                guard case .offer(let offer, _)? = offered else {
                    Issue.record("Mallory had no offer: \(sender.capturedOutput())")
                    return true
                }
                try #require(
                    offer.swarm?.members.count == 3, "the offer names the three recipients: \(offer.swarm as Any)")

                let results = try await swarm.finishReceivers()
                for (index, result) in results.enumerated() {
                    #expect(result.status == 0, "\(swarm.receivers[index].process.capturedOutput())")
                    try swarm.expectIdentical(index, "swarm.bin", to: file.path)
                }
                // Nobody names an honest receiver, whether or not Mallory was asked.
                let everyCut = results.flatMap { SwarmHarness.events("relayerCutOff", in: $0.lines) }
                #expect(everyCut.allSatisfy { $0["offender"] as? String == "mallory" }, "\(everyCut)")
                let served = await mallory.observations.filter { if case .served = $0 { true } else { false } }
                guard !served.isEmpty else {
                    let (status, _, _) = try await sender.finish(timeout: .seconds(240))
                    #expect(status == 0, "\(sender.capturedOutput())")
                    return false
                }

                // The sender names Mallory, cut off on a receiver's report...
                let line = try await sender.nextEvent("relayerCutOff")
                let report = try #require(TransferHarness.json(line))
                #expect(report["offender"] as? String == "mallory", "\(line)")
                let reporter = try #require(report["reporter"] as? String, "\(line)")
                #expect(["alice", "bob"].contains(reporter), "\(line)")
                // ... and that receiver's own output names Mallory too.
                let reporterLines = results[reporter == "alice" ? 0 : 1].lines
                let own = SwarmHarness.events("relayerCutOff", in: reporterLines)
                #expect(own.contains { $0["offender"] as? String == "mallory" }, "\(reporter): \(own)")

                // The sender still completes Mallory's own transfer directly (rule 6), and ends.
                let (status, stdout, _) = try await sender.finish(timeout: .seconds(240))
                #expect(status == 0, "\(sender.capturedOutput())")
                let cuts = SwarmHarness.events("relayerCutOff", in: stdout.compactMap(TransferHarness.json))
                #expect(cuts.allSatisfy { $0["offender"] as? String == "mallory" }, "\(cuts)")
                return true
            }
        }

        /// A sender cannot make a receiver a connection scanner (issue 27 point 8, PROTOCOL.md 11.11 rule 4): a
        /// scripted sender (a session in this process) offers a real `ferry receive` a swarm of it and 128 members at
        /// loopback listeners that accept and close, and sends the same `swarmMembers` five times. Each member is
        /// dialled once. Each list goes only when the receiver's log (`-v -v`) has decided on every member for the
        /// list before (a failed dial, or a dial not made), so a dial still under way never hides one.
        @Test func aSenderCannotMakeAReceiverRedialItsMembersAfterEachList() async throws {
            let (lists, fakes) = (5, 128)
            let swarm = try await onOwnThread { try SwarmHarness(["alice"], extra: ["alice": ["-v", "-v"]]) }
            let receiver = swarm.receivers[0].process
            let reactor = try Reactor()
            defer { reactor.shutdown() }
            let listeners = try (0..<fakes).map { _ in try reactor.listenTCP(on: .ipv4(.loopback, port: 0)) }
            let accepted = Accepted(count: fakes + 1)
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
            var configuration = SessionConfiguration(
                sessionID: swarm.transfer.session, displayName: "sam", identity: try DeviceIdentity.generate(),
                listenPort: 0, discoveryEnabled: false, acceptPolicy: .all, transfersEnabled: true)
            configuration.handshakeTimeout = TestIdentity.handshakeTimeout
            try await Session.run(configuration: configuration) { sam in
                let alice = try await sam.connect(
                    toAddress: .ipv4(.loopback, port: UInt16(swarm.ports[0])), timeout: .seconds(30))
                let transferID = TransferID.random()
                let members =
                    [SwarmMember(deviceID: alice.deviceID, address: "127.0.0.1:\(swarm.ports[0])")]
                    + listeners.map { listener in
                        SwarmMember(
                            deviceID: try! DeviceIdentity.generate().deviceID,
                            address: "127.0.0.1:\(listener.localAddress.port)")
                    }
                let offer = Offer(
                    transferID: transferID, chunkSize: UInt32(Limits.minChunkSize), codecs: [],
                    files: [
                        OfferedFile(path: "x.bin", size: 1000, modificationTime: FileTime(seconds: 0, nanoseconds: 0))
                    ],
                    swarm: Swarm(swarmID: .random(), members: members))
                try await sam.sendTransferFrame([TransferMessage.offer(offer).encoded()], to: alice.peerID)
                var replied = false
                for await event in sam.transferEvents {
                    guard case .frame(let frame, _) = event,
                        case .offerReply(let reply)? = try? TransferMessage(frame: frame)
                    else { continue }
                    replied = reply.accepted && reply.relay
                    break
                }
                try #require(replied, "alice accepted with relay: \(receiver.capturedOutput())")
                var decided = [Int](repeating: 0, count: fakes + 1)
                for round in 1...lists {
                    let list = SwarmMembers(transferID: transferID, members: (0...UInt16(fakes)).map { $0 })
                    try await sam.sendTransferFrame([TransferMessage.swarmMembers(list).encoded()], to: alice.peerID)
                    decided = try await onOwnThread { [decided] in
                        var decided = decided
                        while decided[1...].contains(where: { $0 < round }) {
                            let line = try receiver.waitForErrorLine(timeout: .seconds(60)) { $0.contains("member ") }
                            for member in 1...fakes
                            where line.contains("no link to member \(member):")
                                || line.contains("member \(member) is not dialled")
                                || line.contains("member \(member) at ")
                            {
                                decided[member] += 1
                            }
                        }
                        return decided
                    }
                }
                let dials = Array(accepted.counts[1...])
                #expect(dials.allSatisfy { $0 == 1 }, "dials of each member: \(dials)")
                let cancel = TransferCancel(transferID: transferID, reason: .cancelledByUser)
                try? await sam.sendTransferFrame([TransferMessage.cancel(cancel).encoded()], to: alice.peerID)
            }
        }

        /// Connections accepted per listener, under a lock.
        final class Accepted: @unchecked Sendable {
            private let lock = NSLock()
            private var values: [Int]

            init(count: Int) { values = Array(repeating: 0, count: count) }

            func add(_ index: Int) {
                lock.lock()
                defer { lock.unlock() }
                values[index] += 1
            }

            var counts: [Int] {
                lock.lock()
                defer { lock.unlock() }
                return values
            }
        }

        /// An outsider that learnt the swarm ID (from a member colluding with it: Mallory, honest towards everyone
        /// else) asks a real member for a chunk that member announced: it is refused (or its link closed), never
        /// served, while the colluding member, which is in the swarm, is served the same chunk.
        @Test func aReceiverNotNamedInTheOfferGetsNothingFromTheSwarm() async throws {
            let swarm = try await onOwnThread { try SwarmHarness(["alice", "bob"]) }
            let file = try swarm.transfer.files.random("swarm.bin", size: 32 << 20)
            let session = swarm.transfer.session
            try await HostileSwarmMember.run(sessionID: session, name: "mallory", behaviour: .honest) { insider in
                try await HostileSwarmMember.run(sessionID: session, name: "eve", behaviour: .honest) { outsider in
                    // Eve has an ordinary link to Alice (who accepts everyone) before the broadcast starts.
                    let alice = try await outsider.connect(toPort: swarm.ports[0])
                    let port = Int(await insider.port)
                    let sender = try swarm.transfer.sender(
                        [file.path], to: swarm.ports + [port], ["--compress", "none"])
                    let offered = await insider.waitFor { if case .offer = $0 { true } else { false } }
                    guard case .offer(let offer, _)? = offered, let members = offer.swarm else {
                        Issue.record("Mallory had no offer with a swarm: \(sender.capturedOutput())")
                        return
                    }
                    #expect(members.index(of: outsider.deviceID) == nil, "Eve is not named in the offer")
                    let aliceIndex = try #require(
                        members.members.firstIndex { $0.address == "127.0.0.1:\(swarm.ports[0])" },
                        "no member at Alice's address: \(members.members.map(\.address))")
                    // Alice announces a chunk she holds to Mallory.
                    let announced = await insider.waitFor {
                        if case .message(.swarmHave, _, let member) = $0, member == aliceIndex { true } else { false }
                    }
                    guard case .message(.swarmHave(let have), let alicePeer, _)? = announced,
                        let chunk = have.ranges.first?.lowerBound
                    else {
                        Issue.record(
                            "Alice announced nothing to Mallory: \(swarm.receivers[0].process.capturedOutput())")
                        return
                    }
                    // Eve asks for it with the right swarm ID; right after, Mallory, a member, asks for the same chunk
                    // and is served it, verified (so Alice was serving when Eve asked).
                    try? await outsider.request(members.swarmID, file: have.fileIndex, chunks: [chunk], of: alice)
                    try await insider.request(members.swarmID, file: have.fileIndex, chunks: [chunk], of: alicePeer)
                    let served = await insider.waitFor(timeout: .seconds(60)) {
                        if case .relayedChunk(_, chunk, alicePeer, _, _) = $0 { true } else { false }
                    }
                    guard case .relayedChunk(_, _, _, _, let matches)? = served else {
                        Issue.record("Alice did not serve Mallory, a member, the chunk she announced")
                        return
                    }
                    #expect(matches)

                    let results = try await swarm.finishReceivers()
                    for (index, result) in results.enumerated() {
                        #expect(result.status == 0, "\(swarm.receivers[index].process.capturedOutput())")
                        try swarm.expectIdentical(index, "swarm.bin", to: file.path)
                    }
                    // Alice has ended (and closed Eve's link): Eve had no chunk, of any kind, at any time.
                    let chunks = await outsider.observations.filter { observation in
                        switch observation {
                        case .message(.chunk, _, _), .relayedChunk: true
                        default: false
                        }
                    }
                    #expect(chunks.isEmpty, "Eve, not named in the offer, was sent chunks: \(chunks)")
                    for case .message(.swarmRefuse(let refuse), _, _) in await outsider.observations {
                        #expect(refuse.reason == .notMember, "\(refuse)")
                    }
                    _ = try await sender.finish(timeout: .seconds(240))
                }
            }
        }
    }
}
