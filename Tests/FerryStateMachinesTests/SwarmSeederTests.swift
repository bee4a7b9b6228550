import FerryWire
import Testing

@testable import FerryStateMachines

private let kib = 1024

private func chunk(_ index: Int, file: Int = 0) -> SwarmChunk { SwarmChunk(file: file, index: index) }

/// A seeder over one file of `chunks` 1 KiB chunks, every member replied with relay (resume prefixes as given).
private func makeSeeder(members: Int = 3, chunks: Int = 12, window: Int = 4, resumed: [Int: Int] = [:]) -> SwarmSeeder {
    var seeder = SwarmSeeder(
        memberCount: members, sizes: [UInt64(chunks * kib)], chunkSize: kib, window: window * kib)
    for member in 0..<members {
        try! seeder.replyReceived(
            member: member, relay: true, accepted: [true], resumeOffsets: [UInt64(resumed[member, default: 0] * kib)])
    }
    _ = seeder.repliesComplete()
    return seeder
}

@Suite("Swarm seeder")
struct SwarmSeederTests {
    @Test func eachChunkGoesToTheMemberWithTheLeastInFlight() throws {
        var seeder = makeSeeder()
        #expect(seeder.seed(chunk(0)) == [.announceSeed(chunk(0), seed: 0), .send(chunk(0), to: 0)])
        #expect(seeder.seed(chunk(1)) == [.announceSeed(chunk(1), seed: 1), .send(chunk(1), to: 1)])
        #expect(seeder.seed(chunk(2)) == [.announceSeed(chunk(2), seed: 2), .send(chunk(2), to: 2)])
        // Member 1 acknowledged: it has the least in flight now.
        _ = try seeder.ackReceived(member: 1, chunk: chunk(1), status: .stored)
        #expect(seeder.seed(chunk(3)) == [.announceSeed(chunk(3), seed: 1), .send(chunk(3), to: 1)])
        #expect(seeder.sentBytes == 4 * kib)
    }

    @Test func aSlowMemberSeedsLessAndNoWindowOverflows() throws {
        var seeder = makeSeeder(chunks: 40)
        var seededBy = [0, 0, 0]
        for index in 0..<40 {
            guard let actions = seeder.seed(chunk(index)) else {
                Issue.record("chunk \(index) waited although members 1 and 2 acknowledge at once")
                return
            }
            guard case .send(_, let member) = actions.last else { continue }
            seededBy[member] += 1
            // Members 1 and 2 acknowledge at once and relay each other's chunks; member 0 never acknowledges.
            if member != 0 {
                _ = try seeder.ackReceived(member: member, chunk: chunk(index), status: .stored)
                _ = try seeder.ackReceived(member: 3 - member, chunk: chunk(index), status: .storedFromPeer)
            }
        }
        // Member 0 seeded the first chunk (a tie, to the lowest index), then always had more in flight than the others.
        #expect(seededBy == [1, 20, 19], "\(seededBy)")
        #expect(seeder.inFlightBytes(of: 0) == kib)
        // With every window full, the next chunk waits.
        var full = makeSeeder(chunks: 13, window: 4)
        for index in 0..<12 { #expect(full.seed(chunk(index)) != nil) }
        #expect(full.seed(chunk(12)) == nil)
    }

    @Test func aChunkEveryTakerResumedIsNotSentAndOneSomeLackGoesToOneOfThem() {
        var seeder = makeSeeder(resumed: [0: 2, 1: 2, 2: 1])
        #expect(seeder.seed(chunk(0)) == [.announceSeed(chunk(0), seed: 0)])
        #expect(seeder.seed(chunk(1)) == [.announceSeed(chunk(1), seed: 2), .send(chunk(1), to: 2)])
        #expect(seeder.sentBytes == kib)
    }

    @Test func membersWithoutRelayAreOutsideAndAFileNobodyInTheSwarmTookIsNotSeeded() throws {
        var seeder = SwarmSeeder(memberCount: 3, sizes: [UInt64(4 * kib), 10], chunkSize: kib, window: 4 * kib)
        try seeder.replyReceived(member: 0, relay: true, accepted: [true, false], resumeOffsets: [0, 0])
        try seeder.replyReceived(member: 1, relay: false, accepted: [true, true], resumeOffsets: [0, 0])
        seeder.declined(member: 2)
        #expect(seeder.repliesComplete() == [.announceMembers([0])])
        #expect(seeder.role(of: 1) == .outside && seeder.role(of: 2) == .outside)
        #expect(seeder.seed(SwarmChunk(file: 1, index: 0)) == [])
        #expect(seeder.length(of: SwarmChunk(file: 1, index: 0)) == 10)
        #expect(throws: TransferProtocolError.self) {
            try seeder.replyReceived(member: 0, relay: true, accepted: [true, true], resumeOffsets: [0, 0])
        }
    }

    @Test func acknowledgementsCountHoldingsAndRelayedBytes() throws {
        var seeder = makeSeeder()
        _ = seeder.seed(chunk(0))
        _ = try seeder.ackReceived(member: 0, chunk: chunk(0), status: .stored)
        _ = try seeder.ackReceived(member: 1, chunk: chunk(0), status: .storedFromPeer)
        _ = try seeder.ackReceived(member: 1, chunk: chunk(0), status: .storedFromPeer)  // counted once
        #expect(seeder.relayedBytes == kib && seeder.sentBytes == kib)
        #expect(seeder.holds(1, chunk(0)) && !seeder.holds(2, chunk(0)))
        #expect(throws: TransferProtocolError.self) {
            try seeder.ackReceived(member: 2, chunk: chunk(0), status: .stored)
        }
        #expect(throws: TransferProtocolError.self) {
            try seeder.ackReceived(member: 2, chunk: chunk(99), status: .storedFromPeer)
        }
        #expect(throws: TransferProtocolError.self) {
            try seeder.ackReceived(member: 2, chunk: chunk(0), status: ChunkStatus(rawValue: 9))
        }
        _ = seeder.seed(chunk(1))
        #expect(try seeder.ackReceived(member: 1, chunk: chunk(1), status: .corrupt) == [.send(chunk(1), to: 1)])
    }

    @Test func aLeavingSeedsOrphansAreSeededAnewBeforeTheNewList() throws {
        var seeder = makeSeeder()
        for index in 0..<3 { _ = seeder.seed(chunk(index)) }  // seeds 0, 1, 2
        _ = try seeder.ackReceived(member: 0, chunk: chunk(0), status: .stored)
        _ = try seeder.ackReceived(member: 2, chunk: chunk(0), status: .storedFromPeer)
        // Member 0 leaves: chunk 0 is held by member 2, which becomes its seed; nothing is sent again.
        #expect(seeder.memberLeft(0) == [.announceSeed(chunk(0), seed: 2), .announceMembers([1, 2])])
        // Member 1 leaves with chunk 1 in flight, held by nobody: seeded anew to member 2, before the list.
        #expect(
            seeder.memberLeft(1) == [
                .announceSeed(chunk(1), seed: 2), .send(chunk(1), to: 2), .announceMembers([2]),
            ])
        #expect(seeder.memberLeft(1) == [])
        #expect(seeder.sentBytes == 4 * kib)
    }

    @Test func aReportedMemberIsCutOffNamedAndServedDirectly() throws {
        var seeder = makeSeeder()
        _ = seeder.seed(chunk(0))
        _ = seeder.seed(chunk(1))  // seeded to 1, not acknowledged
        let actions = try seeder.reportReceived(from: 0, offender: 1, reason: .badChunk, chunk: chunk(0))
        #expect(
            actions == [
                .badRelayer(member: 1, reporter: 0, reason: .badChunk, chunk: chunk(0)),
                .announceSeed(chunk(1), seed: 2), .send(chunk(1), to: 2), .announceMembers([0, 2]),
                .serveDirectly(member: 1),
            ])
        #expect(seeder.role(of: 1) == .cutOff && seeder.reports[1] == 1)
        // Reported again: counted and named, nothing else.
        #expect(
            try seeder.reportReceived(from: 2, offender: 1, reason: .badChunk, chunk: chunk(0)) == [
                .badRelayer(member: 1, reporter: 2, reason: .badChunk, chunk: chunk(0))
            ])
        #expect(seeder.reports[1] == 2)
        #expect(seeder.missing(of: 1) == (0..<12).map { chunk($0) })
        #expect(throws: TransferProtocolError.self) {
            try seeder.reportReceived(from: 0, offender: 0, reason: .badChunk, chunk: chunk(0))
        }
        #expect(throws: TransferProtocolError.self) {
            try seeder.reportReceived(from: 0, offender: 7, reason: .badChunk, chunk: chunk(0))
        }
    }

    @Test func requestsToTheSenderAreAnsweredOnceAndOnlyForMembers() throws {
        var seeder = makeSeeder()
        #expect(try seeder.requestReceived(member: 1, chunk: chunk(0)) == [], "not read yet: nothing to send")
        _ = seeder.seed(chunk(0))  // to member 0
        #expect(try seeder.requestReceived(member: 1, chunk: chunk(0)) == [.send(chunk(0), to: 1)])
        #expect(try seeder.requestReceived(member: 1, chunk: chunk(0)) == [], "already coming")
        var outside = SwarmSeeder(memberCount: 2, sizes: [UInt64(kib)], chunkSize: kib, window: kib)
        try outside.replyReceived(member: 0, relay: false, accepted: [true], resumeOffsets: [0])
        #expect(throws: TransferProtocolError.self) { try outside.requestReceived(member: 0, chunk: chunk(0)) }
        #expect(throws: TransferProtocolError.self) { try seeder.requestReceived(member: 1, chunk: chunk(12)) }
    }
}
