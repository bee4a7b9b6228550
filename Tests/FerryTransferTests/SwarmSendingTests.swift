import FerrySession
import FerryStateMachines
import FerrySystem
import FerryTestSupport
import FerryWire
import Foundation
import Testing

@testable import FerryTransfer

/// The sender's side of a swarm broadcast (PROTOCOL.md 11.11), against scripted members (`FakeSwarmMember`): the
/// offer's swarm section, one copy of each chunk from the sender, `storedFromPeer`, requests, reports, a member that
/// vanishes, and `relay` off.
@Suite(.serialized, .timeLimit(.minutes(2))) struct SwarmSendingTests {
    static let chunkSize = Limits.minChunkSize
    /// Three files: 20 chunks and a short one, 2 chunks with a short last one, and an empty file.
    static let sizes = [20 * chunkSize + 1000, chunkSize + 7, 0]

    struct Run {
        var outcomes: [TransferOutcome]
        /// The members as the sender saw them, in offer order.
        var peers: [PeerInfo]
        var records: [FakeSwarmMember.Record]
        var events: [TransferEvent]
        /// Every chunk of the three files.
        var allChunks: Set<SwarmChunk>
    }

    /// Opens one session per name, nested, and runs `body` with them all.
    static func withSessions<T: Sendable>(
        _ names: ArraySlice<String>, _ reactor: Reactor, _ opened: [Session] = [],
        _ body: ([Session]) async throws -> T
    ) async throws -> T {
        guard let name = names.first else { return try await body(opened) }
        return try await Session.run(configuration: TransferEngineTests.configuration(name), reactor: reactor) {
            session in
            try await withSessions(names.dropFirst(), reactor, opened + [session], body)
        }
    }

    /// Sends the three files from an engine ("alice") to one fake member per behaviour ("m0", "m1", ...).
    static func broadcast(
        _ behaviours: [FakeSwarmMember.Behaviour], relay: Bool = true, records: [FakeSwarmMember.Record]? = nil,
        cancelAfterFirstChunkOf watched: FakeSwarmMember.Record? = nil, window: Int? = nil
    ) async throws -> Run {
        try await TemporaryDirectory.with(prefix: "swarm-src") { source in
            let files = TestFiles(in: source)
            var items: [SourceFile] = []
            for (index, size) in sizes.enumerated() {
                let url = try files.random("f\(index).bin", size: size, seed: UInt64(index + 3))
                items.append(SourceFile(path: url.path, name: "f\(index).bin"))
            }
            let reactor = try Reactor()
            defer { reactor.shutdown() }
            let names = ["alice"] + behaviours.indices.map { "m\($0)" }
            return try await withSessions(names[...], reactor) { sessions in
                let alice = sessions[0]
                let records = records ?? behaviours.map { _ in FakeSwarmMember.Record() }
                let members = zip(sessions.dropFirst(), behaviours).enumerated().map { index, pair in
                    FakeSwarmMember(session: pair.0, behaviour: pair.1, record: records[index])
                }
                var configuration = TransferConfiguration(chunkSize: chunkSize, compression: .none)
                configuration.relay = relay
                if let window { configuration.window = window }
                let acts = members.map { member in Task { try await member.run() } }
                defer { acts.forEach { $0.cancel() } }
                let (outcomes, peers, events) = try await TransferEngine.run(
                    session: alice, configuration: configuration
                ) { sender in
                    let stream = sender.events
                    let collector = Task {
                        var events: [TransferEvent] = []
                        for await event in stream { events.append(event) }
                        return events
                    }
                    var peers: [PeerInfo] = []
                    for member in members {
                        peers.append(
                            try await alice.connect(
                                toAddress: .ipv4(.loopback, port: await member.session.listenPort),
                                timeout: .seconds(30)))
                    }
                    let ids = peers.map(\.peerID)
                    let offered = items
                    let sending = Task { try await sender.send(offered, to: ids) }
                    if let watched {
                        await watched.wait(for: .chunk)
                        sending.cancel()
                    }
                    // The test's own cancellation (its time limit) reaches the send: a hang fails instead of holding the runner.
                    let outcomes = await withTaskCancellationHandler {
                        (try? await sending.value) ?? []
                    } onCancel: {
                        sending.cancel()
                    }
                    if watched != nil {
                        for record in records { await record.wait(for: .cancel) }  // before the sessions close
                    }
                    await sender.stop(reason: .shuttingDown)
                    return (outcomes, peers, await collector.value)
                }
                var all = Set<SwarmChunk>()
                for (file, size) in sizes.enumerated() {
                    for index in 0..<(size + chunkSize - 1) / chunkSize {
                        all.insert(SwarmChunk(file: file, index: index))
                    }
                }
                return Run(
                    outcomes: outcomes, peers: peers, records: members.map(\.record), events: events, allChunks: all)
            }
        }
    }

    static func byteCount(_ chunks: [SwarmChunk]) -> UInt64 {
        chunks.reduce(0) { total, chunk in
            total + UInt64(min(chunkSize, sizes[chunk.file] - chunk.index * chunkSize))
        }
    }

    static var totalBytes: UInt64 { UInt64(sizes.reduce(0, +)) }

    @Test func theOfferNamesEveryRecipientInOrderWithOneSwarmID() async throws {
        let run = try await Self.broadcast(Array(repeating: .init(), count: 3))
        var swarmIDs = Set<SwarmID>()
        var transferIDs = Set<TransferID>()
        for record in run.records {
            let offer = try #require(await record.offer)
            let swarm = try #require(offer.swarm)
            swarmIDs.insert(swarm.swarmID)
            transferIDs.insert(offer.transferID)
            #expect(swarm.members.map(\.deviceID) == run.peers.map(\.deviceID))
            #expect(swarm.members.map(\.address) == run.peers.map { $0.address?.description ?? "" })
            #expect(swarm.members.allSatisfy { $0.address.hasPrefix("127.0.0.1:") })
        }
        #expect(swarmIDs.count == 1)
        #expect(transferIDs.count == 1 && SwarmID(transferIDs.first!) != swarmIDs.first)
        #expect(run.outcomes.allSatisfy { $0.isSuccess }, "\(run.outcomes)")
    }

    @Test func eachChunkGoesToExactlyOneMemberAndTheRestIsRelayed() async throws {
        let run = try await Self.broadcast(Array(repeating: .init(), count: 3))
        #expect(run.outcomes.count == 3 && run.outcomes.allSatisfy { $0.isSuccess }, "\(run.outcomes)")
        var sent: [SwarmChunk] = []
        for (index, record) in run.records.enumerated() {
            let chunks = await record.chunks
            sent += chunks
            #expect(await record.lists.first == [0, 1, 2])
            // The digest of each chunk reached every member, naming as seed the member that got the chunk.
            let seeds = Dictionary(await record.digests.map { ($0.chunk, $0.seed) }, uniquingKeysWith: { $1 })
            #expect(Set(seeds.keys) == run.allChunks)
            for chunk in chunks { #expect(seeds[chunk] == index, "\(chunk) went to \(index)") }
            let outcome = try #require(run.outcomes.first { $0.peer.peerID == run.peers[index].peerID })
            #expect(outcome.chunkBytes == Self.byteCount(chunks))
            #expect(outcome.bytes == Self.totalBytes)
            #expect(outcome.relayedBytes == Self.totalBytes - Self.byteCount(chunks))
            #expect(await record.fileEnds.sorted() == [0, 1, 2])
        }
        #expect(sent.count == run.allChunks.count && Set(sent) == run.allChunks, "\(sent.sorted())")
        // Every member seeded some: the least loaded link gets the next chunk.
        for record in run.records { #expect(await !record.chunks.isEmpty) }
    }

    /// Review: a member whose resumed chunk failed the digest asks the sender for it (PROTOCOL.md 11.11 rule 4): the
    /// sender drops the member's claim and sends the chunk, and no longer counts it among the bytes not sent again
    /// (`resumedBytes`, per file and for the transfer), nor twice in what the member verified.
    @Test func aResumedChunkFetchedAgainIsNotCountedResumedByTheSender() async throws {
        var resuming = FakeSwarmMember.Behaviour()
        resuming.refetchesResumedChunk = true
        let run = try await Self.broadcast([resuming, .init(), .init()])
        #expect(run.outcomes.count == 3 && run.outcomes.allSatisfy { $0.isSuccess }, "\(run.outcomes)")
        let peer = run.peers[0].peerID
        let finished = run.events.compactMap { event -> TransferOutcome? in
            if case .finished(let outcome) = event, outcome.peer.peerID == peer { outcome } else { nil }
        }
        #expect(finished.map(\.resumedBytes) == [0], "\(finished)")
        let file0 = run.events.compactMap { event -> FileOutcome? in
            if case .fileFinished(let outcome) = event, outcome.peer.peerID == peer, outcome.fileIndex == 0 {
                outcome
            } else {
                nil
            }
        }
        #expect(file0.map(\.resumedBytes) == [0], "\(file0)")
        let done = run.events.compactMap { event -> UInt64? in
            if case .progress(let progress) = event, progress.peer.peerID == peer, progress.fileIndex == 0 {
                progress.fileBytesDone
            } else {
                nil
            }
        }
        #expect(done.allSatisfy { $0 <= UInt64(Self.sizes[0]) }, "counted twice: \(done.max() ?? 0)")
        let chunks = await run.records[0].chunks
        #expect(chunks.contains(SwarmChunk(file: 0, index: 0)), "the chunk was sent again: \(chunks)")
    }

    @Test func aMemberThatFetchesNothingGetsEveryChunkFromTheSenderOnRequest() async throws {
        var asking = FakeSwarmMember.Behaviour()
        asking.relaysFrom = { _ in false }
        asking.requestsFromSender = true
        let run = try await Self.broadcast([asking, .init(), .init()])
        #expect(run.outcomes.count == 3 && run.outcomes.allSatisfy { $0.isSuccess }, "\(run.outcomes)")
        let asker = await run.records[0].chunks
        #expect(asker.count == run.allChunks.count && Set(asker) == run.allChunks)
        // The others stored from peers what they did not seed: no copy of those from the sender.
        for record in run.records.dropFirst() {
            let chunks = await record.chunks
            let seeds = Dictionary(await record.digests.map { ($0.chunk, $0.seed) }, uniquingKeysWith: { $1 })
            #expect(chunks.allSatisfy { seeds[$0] == run.records.firstIndex { $0 === record } }, "\(chunks)")
        }
    }

    /// Issue 27, point 1: a member that asks the sender at once for every chunk it lacks (once every digest is out, as
    /// a member whose requests to every seed timed out together) gets no more than its window in flight: the answers
    /// wait for its acknowledgements, so what the sender holds for it (its outbox, its link's queue) stays within that
    /// window. Answered without a window, every chunk it asked for was in flight at once.
    @Test func aMemberThatRequestsEverythingNeverHasMoreThanItsWindowInFlight() async throws {
        let window = 4 * Self.chunkSize
        var greedy = FakeSwarmMember.Behaviour()
        greedy.relaysFrom = { _ in false }
        greedy.requestsFromSender = true
        greedy.requestsAllAtOnce = true
        let run = try await Self.broadcast([greedy, .init(), .init()], window: window)
        #expect(run.outcomes.count == 3 && run.outcomes.allSatisfy { $0.isSuccess }, "\(run.outcomes)")
        #expect(Set(await run.records[0].chunks) == run.allChunks, "it got every chunk from the sender")
        let asker = try #require(run.outcomes.first { $0.peer.peerID == run.peers[0].peerID })
        #expect(asker.peakInFlightBytes <= window, "\(asker.peakInFlightBytes) bytes in flight, window \(window)")
        #expect(asker.peakInFlightBytes > window - Self.chunkSize, "its window was used")
        for outcome in run.outcomes { #expect(outcome.peakInFlightBytes <= window) }
    }

    @Test func aReportedRelayerIsCutOffNamedAndServedDirectly() async throws {
        // Nobody can finish before the report has been dealt with: member 0 passes on nothing member 1 seeded, member
        // 2 only what member 0 seeded, and member 1 fetches nothing (it finishes only if the sender serves it).
        var reporter = FakeSwarmMember.Behaviour()
        reporter.report = 1
        var offending = FakeSwarmMember.Behaviour()
        offending.relaysFrom = { _ in false }
        var cautious = FakeSwarmMember.Behaviour()
        cautious.relaysFrom = { $0 == 0 }
        let run = try await Self.broadcast([reporter, offending, cautious])
        #expect(run.outcomes.count == 3 && run.outcomes.allSatisfy { $0.isSuccess }, "\(run.outcomes)")
        let reports = run.events.compactMap { if case .relayerCutOff(let report) = $0 { report } else { nil } }
        #expect(reports.count == 1)
        #expect(
            reports.first?.offender == "m1" && reports.first?.reporter == "m0" && reports.first?.direction == .sending)
        // Everyone learns the new list, the offender too: without it. (Later lists drop members that finished.)
        for record in run.records {
            let lists = await record.lists
            #expect(lists.first == [0, 1, 2] && lists.dropFirst().first == [0, 2], "\(lists)")
        }
        // The offender gets everything it lacks from the sender.
        let offender = await run.records[1].chunks
        #expect(offender.count == run.allChunks.count && Set(offender) == run.allChunks, "\(offender)")
    }

    @Test func theChunksOfAMemberThatVanishesAreSeededAnew() async throws {
        var honest = FakeSwarmMember.Behaviour()
        honest.relaysFrom = { $0 != 2 }  // nobody ever passes on what member 2 seeded
        var vanishing = FakeSwarmMember.Behaviour()
        vanishing.vanishAfterChunks = 1  // it always seeds one: the third chunk at the latest (fewest seeded)
        let run = try await Self.broadcast([honest, honest, vanishing])
        let byPeer = Dictionary(uniqueKeysWithValues: run.outcomes.map { ($0.peer.peerID, $0) })
        #expect(byPeer[run.peers[0].peerID]?.isSuccess == true, "\(run.outcomes)")
        #expect(byPeer[run.peers[1].peerID]?.isSuccess == true, "\(run.outcomes)")
        #expect(byPeer[run.peers[2].peerID]?.isSuccess == false, "\(run.outcomes)")
        #expect(await run.records[2].vanished)
        let digests = await run.records[0].digests
        let seededTo2 = Set(digests.filter { $0.seed == 2 }.map(\.chunk))
        #expect(!seededTo2.isEmpty)
        for chunk in seededTo2 {
            #expect(digests.contains { $0.chunk == chunk && $0.seed != 2 }, "\(chunk) was not seeded anew")
        }
        let lists = await run.records[0].lists
        #expect(lists.first == [0, 1, 2] && lists.dropFirst().first == [0, 1], "\(lists)")
    }

    /// A member that published everything stays in the list while its link is up (rule 6), and leaves it when its
    /// link goes: the others get a list without it. Member 0 answers its last file only once a second list came, so
    /// without that list the broadcast never ends (the test's time limit fails it).
    @Test func aMemberThatCompletedAndThenWentAwayLeavesTheList() async throws {
        var waiting = FakeSwarmMember.Behaviour()
        waiting.lastResultAfterNewList = true
        var leaving = FakeSwarmMember.Behaviour()
        leaving.vanishWhenDone = true
        let run = try await Self.broadcast([waiting, .init(), leaving])
        #expect(run.outcomes.count == 3 && run.outcomes.allSatisfy { $0.isSuccess }, "\(run.outcomes)")
        #expect(await run.records[2].vanished)
        let lists = await run.records[0].lists
        #expect(lists.first == [0, 1, 2] && lists.dropFirst().first == [0, 1], "\(lists)")
    }

    /// A member that completed stays in the list and serves on (rule 6), so a lie it finds afterwards (an answer that
    /// came late) is still reported: the sender cuts the offender off. Member 1 answers its last file only once a
    /// second list came, and only the report makes one: a report dropped because its reporter had finished leaves
    /// the broadcast waiting (the test's time limit fails it).
    @Test func aReportFromAMemberThatCompletedStillCutsTheOffenderOff() async throws {
        var reporter = FakeSwarmMember.Behaviour()
        reporter.reportOnceDone = 1
        var offending = FakeSwarmMember.Behaviour()
        offending.lastResultAfterNewList = true
        let run = try await Self.broadcast([reporter, offending, .init()])
        #expect(run.outcomes.count == 3 && run.outcomes.allSatisfy { $0.isSuccess }, "\(run.outcomes)")
        let reports = run.events.compactMap { if case .relayerCutOff(let report) = $0 { report } else { nil } }
        #expect(reports.count == 1 && reports.first?.offender == "m1" && reports.first?.reporter == "m0", "\(reports)")
        let lists = await run.records[1].lists
        #expect(lists.first == [0, 1, 2] && lists.dropFirst().first == [0, 2], "\(lists)")
    }

    @Test func relayOffOffersNoSwarmAndSendsEveryChunkToEveryone() async throws {
        let run = try await Self.broadcast(Array(repeating: .init(), count: 2), relay: false)
        #expect(run.outcomes.count == 2 && run.outcomes.allSatisfy { $0.isSuccess }, "\(run.outcomes)")
        for record in run.records {
            #expect(await record.offer?.swarm == nil)
            #expect(await record.chunks.count == run.allChunks.count)
            #expect(await record.digests.isEmpty)
            #expect(await record.lists.isEmpty)
        }
        #expect(run.outcomes.allSatisfy { $0.relayedBytes == 0 })
    }

    @Test func aReplyWithRelayAfterTheSwarmStartedJoinsIt() async throws {
        let records = (0..<3).map { _ in FakeSwarmMember.Record() }
        var late = FakeSwarmMember.Behaviour()
        late.replyAfterListOf = records[0]  // after the sender stopped waiting for it
        let run = try await Self.broadcast([.init(), .init(), late], records: records)
        #expect(run.outcomes.count == 3 && run.outcomes.allSatisfy { $0.isSuccess }, "\(run.outcomes)")
        #expect(await records[0].lists.first == [0, 1])
        #expect(await records[0].lists.contains([0, 1, 2]), "the others learn that it joined")
        #expect(await records[2].lists.first == [0, 1, 2], "the late member joins the swarm")
        // It gets the digest of every chunk seeded before it joined, and the rest as any member does.
        let digests = Set(await records[2].digests.map(\.chunk))
        #expect(digests == run.allChunks, "\(digests.count) digests of \(run.allChunks.count)")
        let sent = await records[0].chunks + records[1].chunks + records[2].chunks
        #expect(sent.count == run.allChunks.count && Set(sent) == run.allChunks, "every chunk seeded once")
    }

    @Test func aCorruptChunkOnAMembersLinkIsSentAgainAlone() async throws {
        var corrupting = FakeSwarmMember.Behaviour()
        corrupting.corruptFirstChunk = true
        let run = try await Self.broadcast([corrupting, .init(), .init()])
        #expect(run.outcomes.count == 3 && run.outcomes.allSatisfy { $0.isSuccess }, "\(run.outcomes)")
        let chunks = await run.records[0].chunks
        let first = try #require(chunks.first)
        #expect(chunks.filter { $0 == first }.count == 2)
        #expect(Set(chunks).count == chunks.count - 1, "no go-back-N: only the corrupt chunk came again")
        let seeds = Dictionary(await run.records[0].digests.map { ($0.chunk, $0.seed) }, uniquingKeysWith: { $1 })
        #expect(chunks.allSatisfy { seeds[$0] == 0 }, "nothing but its own seeds: \(chunks)")
    }

    @Test func storedFromPeerFromAReceiverOutsideTheSwarmIsAProtocolError() async throws {
        var rogue = FakeSwarmMember.Behaviour()
        rogue.relay = false
        rogue.rogueStoredFromPeer = true
        let run = try await Self.broadcast([rogue, .init(), .init()])
        let byPeer = Dictionary(uniqueKeysWithValues: run.outcomes.map { ($0.peer.peerID, $0) })
        #expect(
            byPeer[run.peers[0].peerID]?.failure?.contains("broke the transfer protocol") == true, "\(run.outcomes)")
        #expect(byPeer[run.peers[1].peerID]?.isSuccess == true && byPeer[run.peers[2].peerID]?.isSuccess == true)
    }

    @Test func anAddressTheOfferCannotCarryIsLeftEmpty() {
        #expect(TransferEngine.swarmAddress(nil) == "")
        #expect(TransferEngine.swarmAddress(.ipv4(.loopback, port: 41971)) == "127.0.0.1:41971")
    }

    @Test func cancellingASwarmSendTellsEveryMemberAndEnds() async throws {
        var stalling = FakeSwarmMember.Behaviour()
        stalling.silent = true
        let records = (0..<3).map { _ in FakeSwarmMember.Record() }
        let run = try await Self.broadcast(
            Array(repeating: stalling, count: 3), records: records, cancelAfterFirstChunkOf: records[2])
        #expect(run.outcomes.isEmpty, "the send threw CancellationError")
        for record in records {
            #expect(await record.cancels == 1)
        }
    }
}
