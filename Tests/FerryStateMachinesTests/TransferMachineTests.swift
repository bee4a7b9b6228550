import FerryWire
import Testing

@testable import FerryStateMachines

private let id = TransferID(bytes: Array(0x10...0x1f))!
private let kib64 = 65_536

private func reply(_ decisions: [(Bool, UInt64)]) -> OfferReply {
    OfferReply(
        transferID: id, accepted: true, reason: OfferDenyReason(rawValue: 0), detail: "", codecs: [.zlib],
        files: decisions.map { FileDecision(accepted: $0.0, resumeOffset: $0.1) })
}

private func ack(_ file: UInt32, _ offset: UInt64, _ status: ChunkStatus = .stored) -> ChunkAck {
    ChunkAck(transferID: id, fileIndex: file, offset: offset, status: status)
}

/// Runs the sender until it waits or finishes, sending everything it asks for.
private func drain(_ machine: inout OutgoingTransferMachine) -> [OutgoingTransferMachine.Step] {
    var steps: [OutgoingTransferMachine.Step] = []
    while true {
        let step = machine.nextStep()
        steps.append(step)
        switch step {
        case .sendChunk(let file, let offset, let length): machine.chunkSent(file: file, offset: offset, length: length)
        case .sendFileEnd(let file): machine.fileEndSent(file: file)
        case .wait, .finished: return steps
        }
    }
}

@Suite struct OutgoingTransferMachineTests {
    @Test func waitsForTheReplyBeforeAnyChunk() {
        var machine = OutgoingTransferMachine(sizes: [10], chunkSize: kib64, window: 2 * kib64)
        #expect(machine.nextStep() == .wait)
    }

    @Test func sendsChunksWithinTheWindowThenFileEnds() throws {
        var machine = OutgoingTransferMachine(sizes: [UInt64(kib64 * 3 + 5), 0], chunkSize: kib64, window: 2 * kib64)
        #expect(try machine.replyReceived(reply([(true, 0), (true, 0)])))
        #expect(drain(&machine) == [
            .sendChunk(file: 0, offset: 0, length: kib64),
            .sendChunk(file: 0, offset: UInt64(kib64), length: kib64),
            .wait,
        ])
        #expect(try machine.ackReceived(ack(0, 0)) == .stored(file: 0, bytes: kib64))
        #expect(drain(&machine) == [.sendChunk(file: 0, offset: UInt64(2 * kib64), length: kib64), .wait])
        _ = try machine.ackReceived(ack(0, UInt64(kib64)))
        #expect(drain(&machine) == [
            .sendChunk(file: 0, offset: UInt64(3 * kib64), length: 5), .sendFileEnd(file: 0), .sendFileEnd(file: 1),
            .wait,
        ])
        try machine.resultReceived(FileResult(transferID: id, fileIndex: 1, status: .published, detail: "b"))
        #expect(machine.nextStep() == .wait)
        try machine.resultReceived(FileResult(transferID: id, fileIndex: 0, status: .published, detail: "a"))
        #expect(machine.nextStep() == .finished)
        #expect(machine.inFlightBytes == 0)
    }

    @Test func resumesAtTheOffsetTheReceiverGives() throws {
        var machine = OutgoingTransferMachine(sizes: [UInt64(kib64 * 2 + 1)], chunkSize: kib64, window: 4 * kib64)
        _ = try machine.replyReceived(reply([(true, UInt64(2 * kib64))]))
        #expect(drain(&machine) == [.sendChunk(file: 0, offset: UInt64(2 * kib64), length: 1), .sendFileEnd(file: 0), .wait])
    }

    @Test func skippedFilesAreNotSent() throws {
        var machine = OutgoingTransferMachine(sizes: [5, 6], chunkSize: kib64, window: kib64)
        _ = try machine.replyReceived(reply([(false, 0), (true, 0)]))
        #expect(drain(&machine) == [.sendChunk(file: 1, offset: 0, length: 6), .sendFileEnd(file: 1), .wait])
    }

    @Test func aCorruptChunkGoesBackToItsOffset() throws {
        var machine = OutgoingTransferMachine(sizes: [UInt64(kib64 * 3)], chunkSize: kib64, window: 3 * kib64)
        _ = try machine.replyReceived(reply([(true, 0)]))
        _ = drain(&machine)
        #expect(try machine.ackReceived(ack(0, UInt64(kib64), .corrupt)) == .resend(file: 0, offset: UInt64(kib64)))
        #expect(machine.inFlightBytes == kib64)
        #expect(drain(&machine) == [
            .sendChunk(file: 0, offset: UInt64(kib64), length: kib64),
            .sendChunk(file: 0, offset: UInt64(2 * kib64), length: kib64),
            .wait,
        ])
    }

    @Test func aReceiverThatCallsEveryCopyCorruptIsAViolationNotAnEndlessResend() throws {
        var machine = OutgoingTransferMachine(sizes: [UInt64(kib64 * 2)], chunkSize: kib64, window: 2 * kib64)
        _ = try machine.replyReceived(reply([(true, 0)]))
        _ = drain(&machine)
        // A stored chunk in between starts the count again: three corrupt copies of each chunk are honest.
        for round in 0..<IncomingTransferMachine.maxCorruptCopies {
            #expect(try machine.ackReceived(ack(0, 0, .corrupt)) == .resend(file: 0, offset: 0), "\(round)")
            _ = drain(&machine)
        }
        #expect(try machine.ackReceived(ack(0, 0)) == .stored(file: 0, bytes: kib64))
        for _ in 0..<IncomingTransferMachine.maxCorruptCopies {
            #expect(try machine.ackReceived(ack(0, UInt64(kib64), .corrupt)) == .resend(file: 0, offset: UInt64(kib64)))
            _ = drain(&machine)
        }
        #expect(throws: TransferProtocolError.self) { try machine.ackReceived(ack(0, UInt64(kib64), .corrupt)) }
    }

    @Test func protocolErrorsAreThrownNotTrapped() throws {
        var machine = OutgoingTransferMachine(sizes: [100], chunkSize: kib64, window: kib64)
        #expect(throws: TransferProtocolError.self) { try machine.ackReceived(ack(0, 0)) }
        #expect(throws: TransferProtocolError.self) { try machine.replyReceived(reply([(true, 0), (true, 0)])) }
        #expect(throws: TransferProtocolError.self) { try machine.replyReceived(reply([(true, 7)])) }
        _ = try machine.replyReceived(reply([(true, 0)]))
        #expect(throws: TransferProtocolError.self) { try machine.ackReceived(ack(3, 0)) }
        #expect(throws: TransferProtocolError.self) {
            try machine.resultReceived(FileResult(transferID: id, fileIndex: 9, status: .published, detail: ""))
        }
    }

    @Test func anAckAfterTheFilesResultIsLateNotAnError() throws {
        var machine = OutgoingTransferMachine(sizes: [UInt64(2 * kib64)], chunkSize: kib64, window: 2 * kib64)
        _ = try machine.replyReceived(reply([(true, 0)]))
        _ = drain(&machine)
        try machine.resultReceived(FileResult(transferID: id, fileIndex: 0, status: .writeFailed, detail: "x"))
        #expect(try machine.ackReceived(ack(0, 0)) == .late)
        #expect(machine.nextStep() == .finished)
    }

    /// Finished after the last accepted file's result, whatever the order; skipped files wait for nothing; an
    /// offer with nothing accepted is finished at once.
    @Test func finishesAfterTheLastAcceptedFilesResult() throws {
        var machine = OutgoingTransferMachine(sizes: [5, 6, 7], chunkSize: kib64, window: 4 * kib64)
        _ = try machine.replyReceived(reply([(true, 0), (false, 0), (true, 0)]))
        _ = drain(&machine)
        try machine.resultReceived(FileResult(transferID: id, fileIndex: 2, status: .published, detail: "c"))
        #expect(machine.nextStep() == .wait)
        #expect(throws: TransferProtocolError.self) {
            try machine.resultReceived(FileResult(transferID: id, fileIndex: 2, status: .published, detail: "c"))
        }
        #expect(machine.nextStep() == .wait)
        try machine.resultReceived(FileResult(transferID: id, fileIndex: 0, status: .writeFailed, detail: "a"))
        #expect(machine.nextStep() == .finished)

        var none = OutgoingTransferMachine(sizes: [5, 6], chunkSize: kib64, window: kib64)
        _ = try none.replyReceived(reply([(false, 0), (false, 0)]))
        #expect(none.nextStep() == .finished)
    }

    @Test func aDeniedOfferFinishes() throws {
        var machine = OutgoingTransferMachine(sizes: [1], chunkSize: kib64, window: kib64)
        let denied = OfferReply(
            transferID: id, accepted: false, reason: .deniedByUser, detail: "", codecs: [], files: [])
        #expect(try machine.replyReceived(denied) == false)
        #expect(machine.nextStep() == .finished)
    }
}

@Suite struct IncomingTransferMachineTests {
    @Test func storesInOrderThenVerifies() throws {
        var machine = IncomingTransferMachine(
            sizes: [UInt64(kib64 + 3)], accepted: [true], resumeOffsets: [0], chunkSize: kib64)
        #expect(try machine.chunkArrived(file: 0, offset: 0, rawLength: kib64) == .process)
        #expect(machine.chunkStored(file: 0, rawLength: kib64) == [.acknowledge(file: 0, offset: 0, status: .stored)])
        #expect(try machine.fileEndArrived(file: 0, digest: [1]) == [])
        #expect(try machine.chunkArrived(file: 0, offset: UInt64(kib64), rawLength: 3) == .process)
        #expect(machine.chunkStored(file: 0, rawLength: 3) == [
            .acknowledge(file: 0, offset: UInt64(kib64), status: .stored), .verify(file: 0, expectedDigest: [1]),
        ])
        machine.fileEnded(0)
        #expect(machine.isFinished)
    }

    /// Finished once every accepted file ended, each counted once however often or however it ended (failed by
    /// corrupt copies, then ended by the engine too); a file not accepted is never waited for.
    @Test func finishesWhenEveryAcceptedFileEndedEachCountedOnce() throws {
        var machine = IncomingTransferMachine(
            sizes: [10, 20, 30, 40], accepted: [true, false, true, true], resumeOffsets: [0, 0, 0, 0],
            chunkSize: kib64)
        #expect(!machine.isFinished)
        machine.fileEnded(0)
        machine.fileEnded(0)
        machine.fileEnded(1)
        #expect(!machine.isFinished)
        for _ in 0..<IncomingTransferMachine.maxCorruptCopies { _ = machine.chunkCorrupt(file: 2) }
        machine.fileEnded(2)
        #expect(!machine.isFinished)
        machine.fileEnded(3)
        #expect(machine.isFinished)
        #expect(
            IncomingTransferMachine(sizes: [1], accepted: [false], resumeOffsets: [0], chunkSize: kib64).isFinished)
    }

    @Test func anEmptyFileVerifiesAtItsEnd() throws {
        var machine = IncomingTransferMachine(sizes: [0], accepted: [true], resumeOffsets: [0], chunkSize: kib64)
        #expect(try machine.fileEndArrived(file: 0, digest: [9]) == [.verify(file: 0, expectedDigest: [9])])
    }

    @Test func afterACorruptChunkLaterOnesAreDiscardedUntilItComesAgain() throws {
        var machine = IncomingTransferMachine(
            sizes: [UInt64(3 * kib64)], accepted: [true], resumeOffsets: [0], chunkSize: kib64)
        #expect(try machine.chunkArrived(file: 0, offset: 0, rawLength: kib64) == .process)
        #expect(machine.chunkCorrupt(file: 0) == [.acknowledge(file: 0, offset: 0, status: .corrupt)])
        #expect(try machine.chunkArrived(file: 0, offset: UInt64(kib64), rawLength: kib64) == .discard)
        #expect(try machine.chunkArrived(file: 0, offset: 0, rawLength: kib64) == .process)
        _ = machine.chunkStored(file: 0, rawLength: kib64)
        #expect(try machine.chunkArrived(file: 0, offset: UInt64(kib64), rawLength: kib64) == .process)
    }

    @Test func aChunkThatKeepsFailingEndsTheFile() throws {
        var machine = IncomingTransferMachine(sizes: [10], accepted: [true], resumeOffsets: [0], chunkSize: kib64)
        _ = machine.chunkCorrupt(file: 0)
        _ = machine.chunkCorrupt(file: 0)
        let actions = machine.chunkCorrupt(file: 0)
        guard case .fail(0, .corruptChunks, _) = actions.first else {
            Issue.record("expected the file to fail, got \(actions)")
            return
        }
        #expect(machine.isFinished)
        #expect(try machine.chunkArrived(file: 0, offset: 0, rawLength: 10) == .discard)
    }

    @Test func outOfOrderAndUnacceptedChunksAreProtocolErrors() throws {
        var machine = IncomingTransferMachine(
            sizes: [UInt64(2 * kib64), 5], accepted: [true, false], resumeOffsets: [0, 0], chunkSize: kib64)
        #expect(throws: TransferProtocolError.self) {
            try machine.chunkArrived(file: 0, offset: UInt64(kib64), rawLength: kib64)
        }
        #expect(throws: TransferProtocolError.self) { try machine.chunkArrived(file: 1, offset: 0, rawLength: 5) }
        #expect(throws: TransferProtocolError.self) { try machine.chunkArrived(file: 7, offset: 0, rawLength: 5) }
        #expect(throws: TransferProtocolError.self) { try machine.chunkArrived(file: 0, offset: 0, rawLength: 5) }
        #expect(throws: TransferProtocolError.self) { try machine.fileEndArrived(file: 1, digest: []) }
    }

    @Test func resumesAtTheAgreedOffset() throws {
        var machine = IncomingTransferMachine(
            sizes: [UInt64(2 * kib64)], accepted: [true], resumeOffsets: [UInt64(kib64)], chunkSize: kib64)
        #expect(machine.expectedOffset(of: 0) == UInt64(kib64))
        #expect(try machine.chunkArrived(file: 0, offset: UInt64(kib64), rawLength: kib64) == .process)
    }
}

@Suite struct ResumePlanTests {
    /// staged length, file size, chunk size -> resume offset
    static let cases: [(UInt64, UInt64, UInt64, UInt64)] = [
        (0, 100, 64, 0),
        (63, 100, 64, 0),  // part of the first chunk: nothing verified
        (64, 100, 64, 64),
        (99, 100, 64, 64),  // a torn last chunk
        (100, 100, 64, 100),  // everything staged: only the digest is left to check
        (101, 100, 64, 0),  // longer than the file: not this file's data
        (0, 0, 64, 0),
        (3 << 20 + 5, 8 << 20, 1 << 20, 3 << 20),
    ]

    @Test func offsets() {
        for (staged, size, chunk, expected) in Self.cases {
            #expect(ResumePlan.offset(stagedLength: staged, size: size, chunkSize: chunk) == expected, "\(staged)")
        }
    }
}
