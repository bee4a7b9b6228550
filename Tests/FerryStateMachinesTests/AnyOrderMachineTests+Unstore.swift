import FerryWire
import Testing

@testable import FerryStateMachines

extension AnyOrderMachineTests {
    /// A resumed chunk that failed the sender's digest (issue 27 point 5) counts stored no more: a copy of it is
    /// processed, stored and acknowledged, and the file is verified only once it is, not on `fileEnd` with the
    /// damaged chunk still counted.
    @Test func aResumedChunkThatFailedItsCheckIsStoredAgainBeforeTheFileIsVerified() throws {
        let chunk = 65_536
        var machine = IncomingTransferMachine(
            sizes: [UInt64(3 * chunk)], accepted: [true], resumeOffsets: [UInt64(2 * chunk)], chunkSize: chunk,
            anyOrder: true)
        #expect(machine.isStored(file: 0, offset: UInt64(chunk)))
        let failed = machine.storedChunkFailed(file: 0, offset: UInt64(chunk))
        #expect(failed)
        #expect(!machine.isStored(file: 0, offset: UInt64(chunk)))
        let again = machine.storedChunkFailed(file: 0, offset: UInt64(chunk))
        #expect(!again, "once only")
        let never = machine.storedChunkFailed(file: 0, offset: UInt64(2 * chunk))
        #expect(!never, "never stored")
        _ = machine.chunkStored(file: 0, offset: UInt64(2 * chunk), rawLength: chunk)
        let ended = try machine.fileEndArrived(file: 0, digest: [1])
        #expect(ended == [], "chunk 1 is missing")
        let verdict = try machine.chunkArrived(file: 0, offset: UInt64(chunk), rawLength: chunk)
        #expect(verdict == .process)
        let stored = machine.chunkStored(file: 0, offset: UInt64(chunk), rawLength: chunk, fromPeer: true)
        #expect(
            stored == [
                .acknowledge(file: 0, offset: UInt64(chunk), status: .storedFromPeer),
                .verify(file: 0, expectedDigest: [1]),
            ])
    }
}
