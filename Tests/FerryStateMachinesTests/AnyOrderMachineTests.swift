import FerryWire
import Testing

@testable import FerryStateMachines

private let kib64 = 65_536

/// A swarm member's receiving machine (`anyOrder`, PROTOCOL.md 11.11 rule 3): chunks in any order, a bitmap instead
/// of one expected offset, a corrupt chunk asked for alone, the file verified only when every chunk is stored.
@Suite struct AnyOrderMachineTests {
    @Test func takesChunksInAnyOrderAndVerifiesWhenAllAreStored() throws {
        let size = UInt64(3 * kib64 + 10)
        var machine = IncomingTransferMachine(
            sizes: [size], accepted: [true], resumeOffsets: [0], chunkSize: kib64, anyOrder: true)
        #expect(try machine.fileEndArrived(file: 0, digest: [1]) == [])
        #expect(try machine.chunkArrived(file: 0, offset: UInt64(3 * kib64), rawLength: 10) == .process)
        #expect(
            machine.chunkStored(file: 0, offset: UInt64(3 * kib64), rawLength: 10)
                == [.acknowledge(file: 0, offset: UInt64(3 * kib64), status: .stored)])
        #expect(try machine.chunkArrived(file: 0, offset: UInt64(kib64), rawLength: kib64) == .process)
        #expect(
            machine.chunkStored(file: 0, offset: UInt64(kib64), rawLength: kib64, fromPeer: true)
                == [.acknowledge(file: 0, offset: UInt64(kib64), status: .storedFromPeer)])
        // The same chunk again (from the sender after a member already relayed it): dropped, nothing acknowledged.
        #expect(try machine.chunkArrived(file: 0, offset: UInt64(kib64), rawLength: kib64) == .discard)
        #expect(machine.chunkStored(file: 0, offset: UInt64(kib64), rawLength: kib64) == [])
        _ = machine.chunkStored(file: 0, offset: 0, rawLength: kib64)
        #expect(!machine.isFinished)
        #expect(
            machine.chunkStored(file: 0, offset: UInt64(2 * kib64), rawLength: kib64)
                == [
                    .acknowledge(file: 0, offset: UInt64(2 * kib64), status: .stored),
                    .verify(file: 0, expectedDigest: [1]),
                ])
    }

    @Test func aCorruptChunkIsAskedForAloneAndTheFileFailsOnTheThirdCopy() throws {
        var machine = IncomingTransferMachine(
            sizes: [UInt64(4 * kib64)], accepted: [true], resumeOffsets: [0], chunkSize: kib64, anyOrder: true)
        #expect(
            machine.chunkCorrupt(file: 0, offset: UInt64(2 * kib64))
                == [.acknowledge(file: 0, offset: UInt64(2 * kib64), status: .corrupt)])
        // No go-back-N: a later chunk still counts.
        #expect(try machine.chunkArrived(file: 0, offset: UInt64(3 * kib64), rawLength: kib64) == .process)
        _ = machine.chunkCorrupt(file: 0, offset: UInt64(2 * kib64))
        let third = machine.chunkCorrupt(file: 0, offset: UInt64(2 * kib64))
        guard case .fail(0, .corruptChunks, _)? = third.first else {
            Issue.record("the third corrupt copy fails the file: \(third)")
            return
        }
    }

    @Test func aChunkOffItsBoundaryOrOfTheWrongLengthIsAProtocolError() {
        var machine = IncomingTransferMachine(
            sizes: [UInt64(2 * kib64)], accepted: [true], resumeOffsets: [0], chunkSize: kib64, anyOrder: true)
        #expect(throws: TransferProtocolError.self) { try machine.chunkArrived(file: 0, offset: 5, rawLength: kib64) }
        #expect(throws: TransferProtocolError.self) {
            try machine.chunkArrived(file: 0, offset: UInt64(kib64), rawLength: 7)
        }
        #expect(throws: TransferProtocolError.self) {
            try machine.chunkArrived(file: 0, offset: UInt64(2 * kib64), rawLength: kib64)
        }
    }

    @Test func aResumedPrefixCountsAsStoredUpToTheFilesEnd() throws {
        let size = UInt64(2 * kib64 + 3)
        var machine = IncomingTransferMachine(
            sizes: [size, size], accepted: [true, true], resumeOffsets: [UInt64(kib64), size], chunkSize: kib64,
            anyOrder: true)
        #expect(try machine.chunkArrived(file: 0, offset: 0, rawLength: kib64) == .discard)
        #expect(try machine.chunkArrived(file: 0, offset: UInt64(kib64), rawLength: kib64) == .process)
        // Resumed at its end: every chunk, the short last one too, is held; the digest alone completes it.
        #expect(try machine.chunkArrived(file: 1, offset: UInt64(2 * kib64), rawLength: 3) == .discard)
        #expect(try machine.fileEndArrived(file: 1, digest: [2]) == [.verify(file: 1, expectedDigest: [2])])
    }
}
