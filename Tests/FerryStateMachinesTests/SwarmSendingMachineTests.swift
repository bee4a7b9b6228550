import FerryWire
import Testing

@testable import FerryStateMachines

/// What the sending engine adds to the machines for a swarm broadcast: an outgoing machine whose chunks the seeder
/// schedules, and the seeder's per-file holdings, direct service, ended files and late replies.
@Suite struct SwarmSendingMachineTests {
    static let id = TransferID(bytes: Array(0x30...0x3f))!
    static let kib = 1024

    static func chunk(_ index: Int, file: Int = 0) -> SwarmChunk { SwarmChunk(file: file, index: index) }

    @Test func anExternallyScheduledMachineNeverAsksForAChunkAndEndsAFileOnceHeld() throws {
        var machine = OutgoingTransferMachine(sizes: [UInt64(3 * Self.kib), 0], chunkSize: Self.kib, window: Self.kib)
        #expect(
            try machine.replyReceived(
                OfferReply.accepting(
                    Self.id, codecs: [], files: [FileDecision(accepted: true), FileDecision(accepted: true)])))
        machine.scheduleExternally()
        #expect(machine.nextStep() == .wait, "no chunk: the seeder schedules them")
        machine.fileHeld(file: 1)
        machine.fileHeld(file: 1)
        #expect(machine.nextStep() == .sendFileEnd(file: 1))
        machine.fileEndSent(file: 1)
        #expect(machine.nextStep() == .wait)
        machine.fileHeld(file: 0)
        #expect(machine.nextStep() == .sendFileEnd(file: 0))
        machine.fileEndSent(file: 0)
        #expect(machine.nextStep() == .wait, "the results are outstanding")
        try machine.resultReceived(FileResult(transferID: Self.id, fileIndex: 0, status: .published, detail: "a"))
        try machine.resultReceived(FileResult(transferID: Self.id, fileIndex: 1, status: .published, detail: "b"))
        #expect(machine.nextStep() == .finished)
    }

    /// Two files of 3 chunks, three members with relay.
    static func seeder(window: Int = 2) -> SwarmSeeder {
        var seeder = SwarmSeeder(
            memberCount: 3, sizes: [UInt64(3 * kib), UInt64(3 * kib)], chunkSize: kib, window: window * kib)
        for member in 0..<3 {
            try! seeder.replyReceived(member: member, relay: true, accepted: [true, true], resumeOffsets: [0, 0])
        }
        _ = seeder.repliesComplete()
        return seeder
    }

    @Test func holdsAllCountsPerFileFromStoredAndRelayedChunks() throws {
        var seeder = Self.seeder(window: 4)
        for index in 0..<3 { _ = seeder.seed(Self.chunk(index)) }
        #expect(!seeder.holdsAll(1, of: 0))
        _ = try seeder.ackReceived(member: 1, chunk: Self.chunk(1), status: .stored)
        _ = try seeder.ackReceived(member: 1, chunk: Self.chunk(0), status: .storedFromPeer)
        #expect(!seeder.holdsAll(1, of: 0))
        _ = try seeder.ackReceived(member: 1, chunk: Self.chunk(2), status: .storedFromPeer)
        _ = try seeder.ackReceived(member: 1, chunk: Self.chunk(2), status: .storedFromPeer)
        #expect(seeder.holdsAll(1, of: 0) && !seeder.holdsAll(1, of: 1))
    }

    @Test func aMemberServedDirectlyGetsWhatItLacksWithinItsWindowAndAgainWhenCorrupt() throws {
        var seeder = Self.seeder()
        _ = seeder.seed(Self.chunk(0))  // to member 0
        _ = try seeder.ackReceived(member: 0, chunk: Self.chunk(0), status: .stored)
        _ = try seeder.reportReceived(from: 1, offender: 0, reason: .badChunk, chunk: Self.chunk(0))
        #expect(seeder.serve(Self.chunk(0), to: 0) == [], "held")
        #expect(seeder.serve(Self.chunk(1), to: 0) == [.send(Self.chunk(1), to: 0)])
        #expect(seeder.serve(Self.chunk(1), to: 0) == [], "in flight")
        #expect(seeder.serve(Self.chunk(2), to: 0) == [.send(Self.chunk(2), to: 0)])
        #expect(seeder.serve(Self.chunk(0, file: 1), to: 0) == nil, "its window of 2 chunks is full")
        #expect(
            try seeder.ackReceived(member: 0, chunk: Self.chunk(1), status: .corrupt) == [.send(Self.chunk(1), to: 0)])
        _ = try seeder.ackReceived(member: 0, chunk: Self.chunk(2), status: .stored)
        #expect(seeder.serve(Self.chunk(0, file: 1), to: 0) == [.send(Self.chunk(0, file: 1), to: 0)])
    }

    @Test func aFailedFileSeedsItsOrphansAnewAndAPublishedOneDoesNot() throws {
        var seeder = Self.seeder(window: 4)
        for index in 0..<3 { _ = seeder.seed(Self.chunk(index)) }  // chunk i to member i
        _ = seeder.seed(Self.chunk(0, file: 1))  // to member 0
        #expect(seeder.fileEnded(member: 1, file: 1, published: true) == [])
        #expect(seeder.inFlightBytes(of: 1) == Self.kib)
        let actions = seeder.fileEnded(member: 1, file: 0, published: false)
        #expect(
            actions.count == 2 && actions.first == .announceSeed(Self.chunk(1), seed: seeder.seed(of: Self.chunk(1))!))
        #expect(seeder.seed(of: Self.chunk(1)) != 1 && seeder.inFlightBytes(of: 1) == 0)
        #expect(!seeder.takes(1, file: 0))
        #expect(throws: TransferProtocolError.self) {
            try seeder.ackReceived(member: 1, chunk: Self.chunk(1), status: .stored)
        }
    }

    @Test func aReplyAfterTheFirstListIsServedDirectly() throws {
        var seeder = SwarmSeeder(
            memberCount: 3, sizes: [UInt64(3 * Self.kib)], chunkSize: Self.kib, window: 4 * Self.kib)
        try seeder.replyReceived(member: 0, relay: true, accepted: [true], resumeOffsets: [0])
        try seeder.replyReceived(member: 1, relay: true, accepted: [true], resumeOffsets: [0])
        #expect(seeder.repliesComplete() == [.announceMembers([0, 1])])
        #expect(
            try seeder.lateReplyReceived(member: 2, accepted: [true], resumeOffsets: [UInt64(Self.kib)])
                == [.serveDirectly(member: 2)])
        #expect(seeder.role(of: 2) == .cutOff && seeder.activeMembers == [0, 1])
        #expect(seeder.missing(of: 2) == [Self.chunk(1), Self.chunk(2)])
        #expect(seeder.seed(Self.chunk(1))?.contains(.send(Self.chunk(1), to: 2)) == false)
        #expect(throws: TransferProtocolError.self) {
            try seeder.lateReplyReceived(member: 2, accepted: [true], resumeOffsets: [0])
        }
    }
}
