import FerryWire
import Testing

@testable import FerryStateMachines

private let good: [UInt8] = Array(repeating: 0xAB, count: 32)
private let bad: [UInt8] = Array(repeating: 0xCD, count: 32)

private func chunk(_ index: Int) -> SwarmChunk { SwarmChunk(file: 0, index: index) }
private func chunks(_ range: Range<Int>) -> [SwarmChunk] { range.map(chunk) }

/// Member 0 of `members`, one file of 10 chunks, all in the list, links up to `linked`, digests of chunks 0..<10
/// known with the given seeds (default: seed 3 for every chunk).
private func makeFetcher(
    members: Int = 4, linked: [Int] = [1, 2, 3], seeds: [Int?] = Array(repeating: 3, count: 10), resumed: Int = 0
) -> SwarmFetcher {
    var fetcher = SwarmFetcher(
        me: 0, memberCount: members, chunkCounts: [10], accepted: [true], resumedChunks: [resumed])
    _ = fetcher.membersReceived(Array(0..<members))
    for member in linked { _ = fetcher.linkUp(member) }
    _ = try! fetcher.digestsReceived(file: 0, first: 0, entries: seeds.map { (seed: $0, sha256: good) })
    return fetcher
}

@Suite("Swarm fetcher")
struct SwarmFetcherTests {
    @Test func rarestFirstAtMostKPerMember() throws {
        var fetcher = makeFetcher()
        #expect(
            try fetcher.haveReceived(from: 2, chunks(0..<2)) == [
                .request(chunk(0), from: 2), .request(chunk(1), from: 2),
            ])
        // Member 1 announces 0..<6: chunks 2-5 only it has (rarest), 0 and 1 are already asked of member 2.
        let actions = try fetcher.haveReceived(from: 1, chunks(0..<6))
        #expect(actions == chunks(2..<6).map { .request($0, from: 1) })
        #expect(fetcher.outstanding(to: 1).count == Limits.maxSwarmRequestsInFlight)
        // Nothing more of member 1 until one comes back.
        #expect(try fetcher.haveReceived(from: 1, chunks(6..<8)) == [])
        #expect(
            fetcher.relayedChunkArrived(from: 1, chunk(2), sha256: good) == [
                .store(chunk(2)), .request(chunk(6), from: 1),
            ])
        #expect(fetcher.relayedChunkStored(chunk(2)) == [.announce(chunk(2))])
    }

    @Test func rarerChunksGoFirstAndTiesToTheLeastLoadedNearestHolder() throws {
        var fetcher = makeFetcher(seeds: Array(repeating: 3, count: 10))
        _ = try fetcher.haveReceived(from: 3, [chunk(5)])  // asked of 3 at once
        // Chunk 7 is announced by 1 and 2; chunk 8 only by 2: 8 first (rarer), then 7 from 1 (2 has one now).
        let first = try fetcher.haveReceived(from: 2, [chunk(7), chunk(8)])
        #expect(first == [.request(chunk(7), from: 2), .request(chunk(8), from: 2)])
        var second = makeFetcher(seeds: Array(repeating: 3, count: 10))
        _ = try second.haveReceived(from: 1, [chunk(7)])  // requested from 1 at once
        #expect(second.outstanding(to: 1) == [chunk(7)])
        var both = makeFetcher(linked: [], seeds: Array(repeating: 3, count: 10))
        _ = try both.haveReceived(from: 1, [])
        _ = both.linkUp(1)
        _ = both.linkUp(2)
        _ = try both.haveReceived(from: 2, [chunk(7), chunk(8)])  // both asked of 2
        let ranked = try both.haveReceived(from: 1, [chunk(7), chunk(9)])
        #expect(ranked == [.request(chunk(9), from: 1)], "7 is asked already; 9 only 1 has")
    }

    @Test func aBadChunkCutsTheMemberOffReportsItAndAsksElsewhere() throws {
        var fetcher = makeFetcher()
        _ = try fetcher.haveReceived(from: 1, [chunk(0)])
        _ = try fetcher.haveReceived(from: 2, [chunk(0)])
        #expect(fetcher.outstanding(to: 1) == [chunk(0)])
        #expect(
            fetcher.relayedChunkArrived(from: 1, chunk(0), sha256: bad) == [
                .cutOff(1), .report(offender: 1, reason: .badChunk, chunk: chunk(0)), .request(chunk(0), from: 2),
            ])
        #expect(fetcher.cutOffMembers == [1])
        // Nothing more from or to it.
        #expect(try fetcher.haveReceived(from: 1, [chunk(3)]) == [])
        #expect(fetcher.relayedChunkArrived(from: 1, chunk(3), sha256: good) == [])
        #expect(fetcher.requestReceived(from: 1, chunk(0)) == [.refuse(chunk(0), to: 1, reason: .notMember)])
        #expect(fetcher.linkUp(1) == [])
        // A chunk that did not inflate is bad too.
        #expect(
            fetcher.relayedChunkArrived(from: 2, chunk(0), sha256: nil).prefix(2) == [
                .cutOff(2), .report(offender: 2, reason: .badChunk, chunk: chunk(0)),
            ])
    }

    /// The driver cuts off a member that made it queue past its bound (issue 27 point 6): as for a bad chunk, its
    /// requests go elsewhere and it is served nothing, but no report goes to the sender; once only.
    @Test func aMemberCutOffByTheDriverIsAskedAndServedNothingAndNotReported() throws {
        var fetcher = makeFetcher()
        _ = try fetcher.haveReceived(from: 1, [chunk(0)])
        _ = try fetcher.haveReceived(from: 2, [chunk(0)])
        #expect(fetcher.outstanding(to: 1) == [chunk(0)])
        #expect(fetcher.cutOff(1) == [.cutOff(1), .request(chunk(0), from: 2)])
        #expect(fetcher.cutOffMembers == [1])
        #expect(fetcher.cutOff(1) == [])
        #expect(fetcher.cutOff(0) == [], "never itself")
        #expect(try fetcher.haveReceived(from: 1, [chunk(3)]) == [])
        #expect(fetcher.requestReceived(from: 1, chunk(0)) == [.refuse(chunk(0), to: 1, reason: .notMember)])
        #expect(fetcher.linkUp(1) == [])
    }

    @Test func aChunkNobodyAskedForIsAProtocolError() {
        var fetcher = makeFetcher()
        #expect(
            fetcher.relayedChunkArrived(from: 2, chunk(4), sha256: good) == [
                .cutOff(2), .report(offender: 2, reason: .protocolError, chunk: chunk(4)),
            ])
    }

    @Test func aGoodChunkIsStoredAnnouncedAndADuplicateDropped() throws {
        var fetcher = makeFetcher()
        _ = try fetcher.haveReceived(from: 1, [chunk(0)])
        _ = fetcher.requestTimedOut(to: 1, chunk(0))  // asked of the sender? no: its seed (3) is there
        #expect(fetcher.requestedFromSender.isEmpty)
        // The late answer is still taken.
        #expect(fetcher.relayedChunkArrived(from: 1, chunk(0), sha256: good) == [.store(chunk(0))])
        #expect(!fetcher.holds(chunk(0)), "not held for serving before the driver stored it")
        #expect(fetcher.relayedChunkStored(chunk(0)) == [.announce(chunk(0))])
        #expect(fetcher.holds(chunk(0)))
        #expect(fetcher.senderChunkStored(chunk(0)) == [])
    }

    @Test func theSenderIsAskedOnlyWhenTheSeedIsGoneAndNobodyAnnounced() throws {
        // Seeds: chunk 0 by me, 1 by member 2 (link not up yet), 2 by nobody.
        var fetcher = makeFetcher(linked: [1], seeds: [0, 2, nil])
        #expect(fetcher.requestedFromSender == [chunk(2)], "no seed: asked of the sender at once")
        // Member 2's link fails: chunk 1 has no seed any more and nobody announced it.
        #expect(fetcher.linkDown(2) == [.requestFromSender(chunk(1))])
        // Chunk 0 is mine to seed: never asked.
        #expect(!fetcher.requestedFromSender.contains(chunk(0)))
        var announced = makeFetcher(linked: [1], seeds: [2, 2])
        _ = try announced.haveReceived(from: 1, [chunk(1)])
        #expect(
            announced.membersReceived([0, 1]) == [.requestFromSender(chunk(0))], "1 has chunk 1; 0 only the sender")
    }

    @Test func whenEveryAnnouncerFailedTheSenderIsAsked() throws {
        var fetcher = makeFetcher(seeds: [1])
        _ = try fetcher.haveReceived(from: 1, [chunk(0)])
        #expect(fetcher.requestTimedOut(to: 1, chunk(0)) == [.requestFromSender(chunk(0))])
        var refused = makeFetcher(seeds: [1])
        _ = try refused.haveReceived(from: 1, [chunk(0)])
        #expect(refused.refusalReceived(from: 1, chunk(0), reason: .notHeld) == [.requestFromSender(chunk(0))])
    }

    @Test func aMemberLeavingMovesItsRequestsAndLeavingTheListEndsTheSwarm() throws {
        var fetcher = makeFetcher()
        _ = try fetcher.haveReceived(from: 1, [chunk(0)])
        _ = try fetcher.haveReceived(from: 2, [chunk(0)])
        #expect(fetcher.membersReceived([0, 2, 3]) == [.request(chunk(0), from: 2)])
        #expect(fetcher.outstanding(to: 1).isEmpty)
        #expect(fetcher.membersReceived([2, 3]) == [.leftSwarm])
        #expect(fetcher.requestReceived(from: 2, chunk(0)) == [.refuse(chunk(0), to: 2, reason: .notRelaying)])
        #expect(try fetcher.haveReceived(from: 3, [chunk(1)]) == [])
    }

    @Test func servingRules() {
        var fetcher = makeFetcher()
        #expect(fetcher.requestReceived(from: 1, chunk(0)) == [.refuse(chunk(0), to: 1, reason: .notHeld)])
        for index in 0..<6 { _ = fetcher.senderChunkStored(chunk(index)) }
        for index in 0..<4 { #expect(fetcher.requestReceived(from: 1, chunk(index)) == [.serve(chunk(index), to: 1)]) }
        #expect(fetcher.requestReceived(from: 1, chunk(4)) == [.refuse(chunk(4), to: 1, reason: .busy)])
        fetcher.served(to: 1)
        #expect(fetcher.requestReceived(from: 1, chunk(4)) == [.serve(chunk(4), to: 1)])
        #expect(fetcher.requestReceived(from: 0, chunk(4)) == [.refuse(chunk(4), to: 0, reason: .notMember)])
        _ = fetcher.membersReceived([0, 1, 2])
        #expect(fetcher.requestReceived(from: 3, chunk(4)) == [.refuse(chunk(4), to: 3, reason: .notMember)])
        #expect(fetcher.heldRanges(of: 0) == [0..<6])
    }

    /// The sender's lists travel on different links: member 2's list named this member and member 2 asks, while this
    /// member's list naming member 2 is still on its way. That is `busy` (ask again, or elsewhere), never `notMember`,
    /// which would end member 2's requests to this member for good. Once a list removed a member, it is `notMember`.
    @Test func aMemberNoListNamedYetIsBusyNotRefusedForGood() {
        var fetcher = SwarmFetcher(me: 0, memberCount: 3, chunkCounts: [4], accepted: [true], resumedChunks: [0])
        _ = fetcher.linkUp(2)
        _ = fetcher.senderChunkStored(chunk(0))
        #expect(fetcher.requestReceived(from: 2, chunk(0)) == [.refuse(chunk(0), to: 2, reason: .busy)])
        _ = fetcher.membersReceived([0, 1])
        #expect(fetcher.requestReceived(from: 2, chunk(0)) == [.refuse(chunk(0), to: 2, reason: .busy)])
        _ = fetcher.membersReceived([0, 1, 2])
        #expect(fetcher.requestReceived(from: 2, chunk(0)) == [.serve(chunk(0), to: 2)])
        fetcher.served(to: 2)
        _ = fetcher.membersReceived([0, 1])
        #expect(fetcher.requestReceived(from: 2, chunk(0)) == [.refuse(chunk(0), to: 2, reason: .notMember)])
    }

    @Test func aResumedPrefixIsServedOnlyOnceItMatchesTheSendersDigests() {
        var fetcher = SwarmFetcher(me: 0, memberCount: 3, chunkCounts: [4], accepted: [true], resumedChunks: [2])
        _ = fetcher.membersReceived([0, 1, 2])
        _ = fetcher.linkUp(1)
        #expect(fetcher.heldRanges(of: 0) == [])
        #expect(fetcher.requestReceived(from: 1, chunk(0)) == [.refuse(chunk(0), to: 1, reason: .notHeld)])
        let actions = try! fetcher.digestsReceived(
            file: 0, first: 0, entries: [(seed: 1, sha256: good), (seed: 1, sha256: good)])
        #expect(actions == [.verifyHeld(chunk(0)), .verifyHeld(chunk(1))])
        #expect(fetcher.prefixChecked(chunk(0), sha256: good) == [.announce(chunk(0))])
        #expect(fetcher.prefixChecked(chunk(1), sha256: bad) == [.unstore(chunk(1))])
        #expect(fetcher.holds(chunk(0)) && !fetcher.holds(chunk(1)))
        #expect(throws: TransferProtocolError.self) {
            try fetcher.digestsReceived(file: 0, first: 3, entries: [(seed: 1, sha256: good), (seed: 1, sha256: good)])
        }
    }

    /// A member's first announcements may arrive before the sender's list that names it (its own link from the sender
    /// ran ahead of ours); it never repeats them, so they are kept and used once the list comes. (Dropping them left
    /// this member waiting forever for chunks that member seeds.)
    @Test func announcementsThatCameBeforeTheListAreUsedOnceItComes() throws {
        var fetcher = SwarmFetcher(me: 0, memberCount: 3, chunkCounts: [4], accepted: [true], resumedChunks: [0])
        #expect(fetcher.linkUp(1) == [.announceAll(to: 1)])
        #expect(try fetcher.haveReceived(from: 1, chunks(0..<2)) == [], "not in a list yet: nothing asked of it")
        #expect(fetcher.membersReceived([0, 1, 2]) == [])
        let actions = try fetcher.digestsReceived(
            file: 0, first: 0, entries: (0..<4).map { _ in (seed: 1, sha256: good) })
        #expect(actions == [.request(chunk(0), from: 1), .request(chunk(1), from: 1)])
        // A member the list leaves out is still never asked.
        var outside = SwarmFetcher(me: 0, memberCount: 3, chunkCounts: [4], accepted: [true], resumedChunks: [0])
        _ = outside.linkUp(2)
        _ = try outside.haveReceived(from: 2, chunks(0..<2))
        _ = outside.membersReceived([0, 1])
        #expect(
            try outside.digestsReceived(file: 0, first: 0, entries: (0..<4).map { _ in (seed: 1, sha256: good) })
                == [])
    }

    /// Nobody is waited for forever: a check with nothing stored since the previous one asks the sender again for
    /// what it was asked, and for what a live seed never announced; a check after progress does nothing.
    @Test func aMemberThatStoredNothingSinceTheLastCheckAsksTheSender() throws {
        // Seed 3 is up and in the list but announces nothing: nothing is asked of anyone.
        var fetcher = makeFetcher(seeds: Array(repeating: 3, count: 4) + [nil])
        #expect(fetcher.requestedFromSender == [chunk(4)], "no seed: asked of the sender at once")
        _ = try fetcher.haveReceived(from: 1, [chunk(3)])
        #expect(fetcher.outstanding(to: 1) == [chunk(3)])
        // Stalled: chunk 4 asked again, chunks 0-2 asked of the sender; 3 waits for member 1's answer (its own timeout).
        #expect(
            fetcher.progressCheck() == [
                .requestFromSender(chunk(4)), .requestFromSender(chunk(0)), .requestFromSender(chunk(1)),
                .requestFromSender(chunk(2)),
            ])
        #expect(fetcher.requestedFromSender == Set(chunks(0..<3) + [chunk(4)]))
        // Still nothing: everything asked of the sender is asked again.
        #expect(
            fetcher.progressCheck() == chunks(0..<3).map { .requestFromSender($0) } + [.requestFromSender(chunk(4))])
        // Something arrived meanwhile: no check asks anything.
        _ = fetcher.senderChunkStored(chunk(0))
        #expect(fetcher.progressCheck() == [])
        #expect(fetcher.progressCheck() == [chunk(1), chunk(2), chunk(4)].map { .requestFromSender($0) })
        // Everything held: nothing more.
        for index in [1, 2, 4] { _ = fetcher.senderChunkStored(chunk(index)) }
        _ = fetcher.relayedChunkArrived(from: 1, chunk(3), sha256: good)
        _ = fetcher.relayedChunkStored(chunk(3))
        for index in 5..<10 { _ = fetcher.senderChunkStored(chunk(index)) }
        #expect(fetcher.isComplete)
        #expect(fetcher.progressCheck() == [])
        #expect(fetcher.progressCheck() == [])
    }

    /// Requests outstanding to all members together stay within `maxTotalInFlight`, whatever the number of members
    /// (K = 4 to each of 3 members would be 12): the relayed chunks on their way to a member, and so its memory, do
    /// not grow with the swarm.
    @Test func requestsToAllMembersTogetherStayWithinTheTotal() throws {
        var fetcher = SwarmFetcher(
            me: 0, memberCount: 4, chunkCounts: [20], accepted: [true], resumedChunks: [0], maxTotalInFlight: 6)
        _ = fetcher.membersReceived([0, 1, 2, 3])
        for member in 1...3 { _ = fetcher.linkUp(member) }
        _ = try fetcher.digestsReceived(file: 0, first: 0, entries: (0..<20).map { _ in (seed: 1, sha256: good) })
        for member in 1...3 { _ = try fetcher.haveReceived(from: member, chunks(0..<20)) }
        func total() -> Int { (1...3).reduce(0) { $0 + fetcher.outstanding(to: $1).count } }
        #expect(total() == 6)
        #expect((1...3).allSatisfy { fetcher.outstanding(to: $0).count <= Limits.maxSwarmRequestsInFlight })
        // An answer frees one slot, taken again at once.
        let answered = try #require(fetcher.outstanding(to: 2).min())
        let actions = fetcher.relayedChunkArrived(from: 2, answered, sha256: good)
        #expect(actions.filter { if case .request = $0 { true } else { false } }.count == 1)
        #expect(total() == 6)
        // A timeout moves the chunk elsewhere without going past the total.
        let late = try #require(fetcher.outstanding(to: 3).min())
        _ = fetcher.requestTimedOut(to: 3, late)
        #expect(total() == 6)
    }

    /// A relayed chunk is announced only once the driver stored it: one whose store failed is not held, so it is
    /// neither announced nor served (a member that asked would be served what the staged file holds there, fail the
    /// digest check and cut this honest member off), and it is asked again.
    @Test func aRelayedChunkWhoseStoreFailedIsNeitherAnnouncedNorServed() throws {
        var fetcher = makeFetcher()
        #expect(try fetcher.haveReceived(from: 1, [chunk(0)]) == [.request(chunk(0), from: 1)])
        _ = try fetcher.haveReceived(from: 2, [chunk(0)])
        #expect(fetcher.relayedChunkArrived(from: 1, chunk(0), sha256: good) == [.store(chunk(0))])
        #expect(fetcher.requestReceived(from: 2, chunk(0)) == [.refuse(chunk(0), to: 2, reason: .notHeld)])
        #expect(fetcher.heldRanges(of: 0) == [])
        // Not stored: asked again (of the nearest announcer), never announced.
        #expect(fetcher.storeFailed(chunk(0)) == [.request(chunk(0), from: 1)])
        #expect(!fetcher.holds(chunk(0)))
        #expect(fetcher.heldRanges(of: 0) == [])
        #expect(fetcher.requestReceived(from: 3, chunk(0)) == [.refuse(chunk(0), to: 3, reason: .notHeld)])
        #expect(fetcher.relayedChunkStored(chunk(0)) == [], "a store that failed is not reported stored after")
        // The answer to the new request is stored, then announced.
        #expect(fetcher.relayedChunkArrived(from: 1, chunk(0), sha256: good) == [.store(chunk(0))])
        #expect(fetcher.relayedChunkStored(chunk(0)) == [.announce(chunk(0))])
        #expect(fetcher.heldRanges(of: 0) == [0..<1])
        #expect(fetcher.cutOffMembers == [])
    }

    /// A file that failed here is fetched no more (its request slots go to other files, a late answer is dropped
    /// without cutting off the member that sent it) and served no more: what its staged file holds is not known to
    /// be its chunks.
    @Test func aFileThatFailedHereIsNeitherFetchedNorServed() throws {
        var fetcher = SwarmFetcher(
            me: 0, memberCount: 3, chunkCounts: [6, 1], accepted: [true, true], resumedChunks: [0, 0])
        _ = fetcher.membersReceived([0, 1, 2])
        _ = fetcher.linkUp(1)
        _ = fetcher.linkUp(2)
        let file1 = SwarmChunk(file: 1, index: 0)
        _ = try fetcher.digestsReceived(file: 0, first: 0, entries: (0..<5).map { _ in (seed: 1, sha256: good) })
        _ = try fetcher.digestsReceived(file: 1, first: 0, entries: [(seed: 1, sha256: good)])
        #expect(fetcher.senderChunkStored(chunk(4)) == [.announce(chunk(4))])
        #expect(try fetcher.haveReceived(from: 1, chunks(0..<4)).count == Limits.maxSwarmRequestsInFlight)
        #expect(try fetcher.haveReceived(from: 1, [file1]) == [], "member 1 has K requests outstanding")
        // File 0 fails here: its slots go to file 1.
        #expect(fetcher.fileEnded(0, published: false) == [.request(file1, from: 1)])
        #expect(fetcher.outstanding(to: 1) == [file1])
        #expect(!fetcher.holds(chunk(4)))
        #expect(fetcher.heldRanges(of: 0) == [])
        #expect(fetcher.requestReceived(from: 2, chunk(4)) == [.refuse(chunk(4), to: 2, reason: .notHeld)])
        // A late answer for it: dropped, nothing stored, its honest sender not cut off.
        #expect(fetcher.relayedChunkArrived(from: 1, chunk(0), sha256: good) == [])
        #expect(fetcher.cutOffMembers == [])
        #expect(!fetcher.holds(chunk(0)))
        // Nothing of it is asked again, of anyone.
        #expect(try fetcher.haveReceived(from: 2, [chunk(5)]) == [])
        #expect(try fetcher.digestsReceived(file: 0, first: 5, entries: [(seed: nil, sha256: good)]) == [])
        #expect(fetcher.requestedFromSender.isEmpty)
        #expect(fetcher.progressCheck() == [])
        #expect(fetcher.progressCheck() == [], "file 1's chunk is asked of member 1; nothing of file 0 of the sender")
        #expect(fetcher.relayedChunkArrived(from: 1, file1, sha256: good) == [.store(file1)])
        #expect(fetcher.relayedChunkStored(file1) == [.announce(file1)])
        #expect(fetcher.isComplete)
    }

    /// A file published here holds every chunk: it is still served.
    @Test func aPublishedFileIsStillServed() throws {
        var fetcher = makeFetcher()
        for index in 0..<10 { _ = fetcher.senderChunkStored(chunk(index)) }
        #expect(fetcher.fileEnded(0, published: true) == [])
        #expect(fetcher.heldRanges(of: 0) == [0..<10])
        #expect(fetcher.requestReceived(from: 2, chunk(3)) == [.serve(chunk(3), to: 2)])
    }

    /// One `swarmHave` of 1024 overlapping ranges over a file of 2^24 chunks (issue 27 point 3: one such frame of
    /// 8 KiB kept a member's engine busy 8.2 s and raised its memory by 263 MB) costs one pass over the words (64
    /// chunks each) the ranges cover together, never a step per chunk of each range; the same frame again costs no
    /// more, and asks for nothing more.
    @Test func anAnnouncementCostsOneWordPer64ChunksWhateverItsRangesOverlap() throws {
        let count = 1 << 24
        var fetcher = SwarmFetcher(me: 0, memberCount: 2, chunkCounts: [count], accepted: [true], resumedChunks: [0])
        _ = fetcher.membersReceived([0, 1])
        _ = fetcher.linkUp(1)
        // The sender's digests of the first two chunks, which member 1 seeds: only they can be asked for.
        let digests = try fetcher.digestsReceived(
            file: 0, first: 0, entries: [(seed: 1, sha256: good), (seed: 1, sha256: good)])
        #expect(digests == [], "waiting for the seed's announcement")
        let ranges = (0..<Limits.maxSwarmEntriesPerFrame).map { $0..<count - $0 }
        #expect(
            try fetcher.haveReceived(from: 1, file: 0, ranges: ranges) == [
                .request(chunk(0), from: 1), .request(chunk(1), from: 1),
            ])
        let once = fetcher.announcementWords
        #expect(once <= count / 64 + 1, "one pass over the words the ranges cover: \(once)")
        #expect(try fetcher.haveReceived(from: 1, file: 0, ranges: ranges) == [])
        #expect(fetcher.announcementWords <= 2 * once)
    }

    /// swarmHave ranges stay inside the file (PROTOCOL.md 11.11): a range past the file's last chunk, an empty one,
    /// or a file the offer does not have is a protocol error, found before any of the frame is merged.
    @Test func anAnnouncementPastTheFileIsAProtocolErrorBeforeAnyWork() {
        var fetcher = makeFetcher()
        #expect(throws: TransferProtocolError.self) {
            try fetcher.haveReceived(from: 1, file: 0, ranges: [0..<5, 0..<11])
        }
        #expect(throws: TransferProtocolError.self) { try fetcher.haveReceived(from: 1, file: 0, ranges: [3..<3]) }
        #expect(throws: TransferProtocolError.self) { try fetcher.haveReceived(from: 1, file: 1, ranges: [0..<1]) }
        #expect(fetcher.announcementWords == 0)
        #expect(fetcher.outstanding(to: 1).isEmpty)
    }

    /// The announcements of a member cut off, or left out by the sender's list, are dropped before any work.
    @Test func anAnnouncementOfAMemberCutOffOrLeftOutCostsNothing() throws {
        var fetcher = makeFetcher()
        _ = try fetcher.haveReceived(from: 1, [chunk(0)])
        _ = fetcher.relayedChunkArrived(from: 1, chunk(0), sha256: bad)
        #expect(fetcher.cutOffMembers == [1])
        let before = fetcher.announcementWords
        #expect(try fetcher.haveReceived(from: 1, file: 0, ranges: [0..<10]) == [])
        _ = fetcher.membersReceived([0, 1, 3])
        #expect(try fetcher.haveReceived(from: 2, file: 0, ranges: [0..<10]) == [])
        #expect(fetcher.announcementWords == before)
    }

    /// A resumed chunk that fails the sender's digest is unstored (the transfer must count it stored no more, or the
    /// copy fetched would be dropped as one stored already, issue 27 point 5) before it is asked for, and once the
    /// copy arrives it is stored and held: asked for once.
    @Test func aResumedChunkThatFailsItsCheckIsUnstoredThenFetchedOnce() throws {
        var fetcher = SwarmFetcher(me: 0, memberCount: 2, chunkCounts: [4], accepted: [true], resumedChunks: [2])
        _ = fetcher.membersReceived([0, 1])
        _ = fetcher.linkUp(1)
        _ = try fetcher.haveReceived(from: 1, chunks(1..<4))
        let entries = (0..<4).map { (seed: $0 < 2 ? 0 : 1, sha256: good) }
        #expect(
            try fetcher.digestsReceived(file: 0, first: 0, entries: entries) == [
                .verifyHeld(chunk(0)), .verifyHeld(chunk(1)), .request(chunk(2), from: 1),
                .request(chunk(3), from: 1),
            ])
        #expect(fetcher.prefixChecked(chunk(1), sha256: bad) == [.unstore(chunk(1)), .request(chunk(1), from: 1)])
        #expect(fetcher.relayedChunkArrived(from: 1, chunk(1), sha256: good) == [.store(chunk(1))])
        #expect(fetcher.relayedChunkStored(chunk(1)) == [.announce(chunk(1))])
        #expect(fetcher.holds(chunk(1)))
        #expect(fetcher.outstanding(to: 1) == [chunk(2), chunk(3)], "chunk 1 is asked no more")
    }

    /// Every file's chunks share one word array, so words straddle files: a range, a removal and a check touch the
    /// bits of their own file only, and bitmaps over the same files compare word for word.
    @Test func aBitmapKeepsFilesApartWithinSharedWords() {
        var bitmap = ChunkBitmap(chunkCounts: [3, 70, 5])
        bitmap.insert(0..<3, of: 0)
        bitmap.insert(60..<70, of: 1)
        bitmap.insert(0..<5, of: 2)
        #expect(bitmap.count == 18)
        #expect(bitmap.containsAll(of: 0) && bitmap.containsAll(of: 2) && !bitmap.containsAll(of: 1))
        #expect(bitmap.ranges(of: 1) == [60..<70])
        #expect(!bitmap.contains(SwarmChunk(file: 1, index: 0)) && !bitmap.contains(SwarmChunk(file: 1, index: 59)))
        var wanted = ChunkBitmap(chunkCounts: [3, 70, 5])
        wanted.insert(SwarmChunk(file: 1, index: 61))
        wanted.insert(SwarmChunk(file: 1, index: 0))
        wanted.insert(SwarmChunk(file: 2, index: 0))
        var excluded = ChunkBitmap(chunkCounts: [3, 70, 5])
        excluded.insert(SwarmChunk(file: 1, index: 0))
        let (added, words) = bitmap.insert(0..<70, of: 1, returningAddedIn: wanted, notIn: excluded)
        #expect(added == [], "61 was there already, 0 is excluded, file 2's chunk is another file's")
        #expect(words == 2, "bits 3..<73 span two words")
        #expect(bitmap.count == 78 && bitmap.containsAll(of: 1))
        bitmap.removeAll(of: 1)
        #expect(bitmap.count == 8 && bitmap.containsAll(of: 0) && bitmap.containsAll(of: 2))
        #expect(bitmap.ranges(of: 1) == [])
        var fresh = ChunkBitmap(chunkCounts: [3, 70, 5])
        let (returned, _) = fresh.insert(0..<70, of: 1, returningAddedIn: wanted, notIn: excluded)
        #expect(returned == [61])
    }
}
