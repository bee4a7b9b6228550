import FerryWire
import Testing

@testable import FerryStateMachines

/// `OutgoingTransferMachine.fileAbandoned`: a file whose source changed while it was sent gets no more chunks and no
/// `fileEnd`, not even after a corrupt acknowledgement; the next file goes on, and the transfer ends with the results.
@Suite struct OutgoingAbandonTests {
    static let id = TransferID(bytes: Array(0x20...0x2f))!
    static let chunk = 65_536

    static func ack(_ file: UInt32, _ offset: UInt64, _ status: ChunkStatus) -> ChunkAck {
        ChunkAck(transferID: id, fileIndex: file, offset: offset, status: status)
    }

    @Test func anAbandonedFileSendsNothingMoreAndTheNextGoesOn() throws {
        var machine = OutgoingTransferMachine(
            sizes: [UInt64(3 * Self.chunk), 10], chunkSize: Self.chunk, window: Self.chunk)
        let decisions = [FileDecision(accepted: true), FileDecision(accepted: true)]
        #expect(
            try machine.replyReceived(
                OfferReply(
                    transferID: Self.id, accepted: true, reason: OfferDenyReason(rawValue: 0), detail: "", codecs: [],
                    files: decisions)))
        #expect(machine.nextStep() == .sendChunk(file: 0, offset: 0, length: Self.chunk))
        machine.chunkSent(file: 0, offset: 0, length: Self.chunk)
        machine.fileAbandoned(file: 0)
        #expect(try machine.ackReceived(Self.ack(0, 0, .corrupt)) == .late, "no resend of an abandoned file")
        #expect(machine.nextStep() == .sendChunk(file: 1, offset: 0, length: 10))
        machine.chunkSent(file: 1, offset: 0, length: 10)
        #expect(try machine.ackReceived(Self.ack(1, 0, .stored)) == .stored(file: 1, bytes: 10))
        #expect(machine.nextStep() == .sendFileEnd(file: 1))
        machine.fileEndSent(file: 1)
        #expect(machine.nextStep() == .wait, "both results are outstanding")
        try machine.resultReceived(FileResult(transferID: Self.id, fileIndex: 0, status: .sourceChanged))
        try machine.resultReceived(FileResult(transferID: Self.id, fileIndex: 1, status: .published, detail: "b"))
        #expect(machine.nextStep() == .finished)
    }
}
