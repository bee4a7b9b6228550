import FerryWire

/// The sending side of one transfer to one peer: which chunk goes next, the window of unacknowledged bytes,
/// go-back-N after a corrupt chunk, and when the transfer is over.
///
/// Pure: the driver asks `nextStep()`, performs it (reads, compresses, sends) and reports back with `chunkSent` /
/// `fileEndSent`; frames from the peer come in through `replyReceived`, `ackReceived` and `resultReceived`.
/// Files go in offer order; a file whose last chunk was sent no longer holds back the next one, so many small files
/// stream without a round trip each.
public struct OutgoingTransferMachine: Sendable {
    /// What the driver does next.
    public enum Step: Equatable, Sendable {
        case sendChunk(file: Int, offset: UInt64, length: Int)
        case sendFileEnd(file: Int)
        /// The window is full, or everything is sent and results are outstanding: wait for a frame.
        case wait
        case finished

        /// Whether the step is a chunk to send.
        public var sendsChunk: Bool {
            if case .sendChunk = self { true } else { false }
        }
    }

    /// What an acknowledgement did.
    public enum AckOutcome: Equatable, Sendable {
        /// The chunk is stored: `bytes` of the file are done.
        case stored(file: Int, bytes: Int)
        /// The chunk arrived corrupt: the file goes back to `offset` (already reflected in `nextStep`).
        case resend(file: Int, offset: UInt64)
        /// The file already has its result (the receiver ended it early): an acknowledgement still in flight.
        case late
    }

    private struct FileState {
        var size: UInt64
        var accepted = false
        var nextOffset: UInt64 = 0
        var endSent = false
        /// The driver gave up on it (its source changed): nothing more of it is sent.
        var abandoned = false
        var result: FileStatus?
        /// Corrupt acknowledgements since the file's last stored chunk.
        var corruptAcks = 0
        /// Scheduled externally: the receiver holds every chunk, so the file's `fileEnd` may go.
        var held = false
    }

    private struct InFlight {
        var file: Int
        var offset: UInt64
        var length: Int
    }

    /// Where the transfer is: waiting for the reply, sending, or finished.
    public enum Phase: Equatable, Sendable {
        case awaitingReply
        case sending
        case finished
    }

    /// Where the transfer is now.
    public private(set) var phase = Phase.awaitingReply
    /// The offer's chunk size.
    public let chunkSize: Int
    /// Most bytes of chunks sent and not yet acknowledged.
    public let window: Int
    private var files: [FileState]
    /// Accepted files without a result yet: asked after every result and every idle step, so never counted by a walk
    /// over all files (a transfer of 100 000 files made that quadratic).
    private var awaitingResults = 0
    private var inFlight: [InFlight] = []
    /// Bytes of chunks sent and not yet acknowledged (at most `window`).
    public private(set) var inFlightBytes = 0
    /// Lowest file index that may still have something to send.
    private var cursor = 0
    /// Chunks are scheduled by the driver, not by this machine (a swarm broadcast, PROTOCOL.md 11.11).
    public private(set) var isScheduledExternally = false
    /// Scheduled externally: files the receiver holds whole whose `fileEnd` is still to be asked for, in order.
    private var endsDue: [Int] = []

    /// A machine for an offer of files of `sizes`. Precondition: the window holds at least one chunk.
    public init(sizes: [UInt64], chunkSize: Int, window: Int) {
        precondition(chunkSize > 0 && window >= chunkSize, "window must hold at least one chunk")
        self.files = sizes.map { FileState(size: $0) }
        self.chunkSize = chunkSize
        self.window = window
    }

    /// How many files the offer has.
    public var fileCount: Int { files.count }
    /// Whether the receiver accepted `file`.
    public func isAccepted(_ file: Int) -> Bool { files[file].accepted }
    /// How `file` ended, once its result arrived.
    public func result(of file: Int) -> FileStatus? { files[file].result }

    /// The receiver's answer. Returns false when it denied the whole offer (the machine is finished).
    public mutating func replyReceived(_ reply: OfferReply) throws(TransferProtocolError) -> Bool {
        guard phase == .awaitingReply else { throw TransferProtocolError("a second reply to the offer") }
        guard reply.accepted else {
            phase = .finished
            return false
        }
        guard reply.files.count == files.count else {
            throw TransferProtocolError("the reply answers \(reply.files.count) files of \(files.count)")
        }
        for (index, decision) in reply.files.enumerated() where decision.accepted {
            let offset = decision.resumeOffset
            guard offset <= files[index].size, offset % UInt64(chunkSize) == 0 || offset == files[index].size else {
                throw TransferProtocolError("resume offset \(offset) of file \(index) is not a chunk boundary")
            }
            files[index].accepted = true
            files[index].nextOffset = offset
            awaitingResults += 1
        }
        phase = .sending
        if awaitingResults == 0 { phase = .finished }
        return true
    }

    /// From now on the driver schedules the chunks (a swarm broadcast's seeder, PROTOCOL.md 11.11): `nextStep` never
    /// asks for a chunk, only for the `fileEnd` of each file the driver says the receiver holds whole (`fileHeld`),
    /// and says when every result is in. The driver checks the acknowledgements itself (`ackReceived` is not used).
    public mutating func scheduleExternally() {
        isScheduledExternally = true
    }

    /// Scheduled externally: the receiver holds every chunk of `file` (by its acknowledgements), so its `fileEnd`
    /// may go. Once per file; ignored for a file not accepted.
    public mutating func fileHeld(file: Int) {
        guard isScheduledExternally, files[file].accepted, !files[file].held else { return }
        files[file].held = true
        endsDue.append(file)
    }

    /// What to do next.
    public mutating func nextStep() -> Step {
        switch phase {
        case .awaitingReply: return .wait
        case .finished: return .finished
        case .sending: break
        }
        if isScheduledExternally {
            while let file = endsDue.first {
                let state = files[file]
                guard state.endSent || state.abandoned || state.result != nil else { return .sendFileEnd(file: file) }
                endsDue.removeFirst()
            }
            return .wait
        }
        while cursor < files.count, Self.isSent(files[cursor]) { cursor += 1 }
        guard cursor < files.count else {
            return awaitingResults == 0 ? .finished : .wait
        }
        let file = files[cursor]
        if file.nextOffset < file.size {
            let length = Int(min(UInt64(chunkSize), file.size - file.nextOffset))
            if inFlightBytes > 0, inFlightBytes + length > window { return .wait }
            return .sendChunk(file: cursor, offset: file.nextOffset, length: length)
        }
        return .sendFileEnd(file: cursor)
    }

    /// Nothing is left to send for this file (skipped, failed, or all chunks and its end sent).
    private static func isSent(_ file: FileState) -> Bool {
        !file.accepted || file.result != nil || file.abandoned || (file.nextOffset >= file.size && file.endSent)
    }

    /// The driver sent the chunk `nextStep` asked for. Precondition: it is the next one of `file`.
    public mutating func chunkSent(file: Int, offset: UInt64, length: Int) {
        precondition(files[file].nextOffset == offset, "chunks must be sent in the order nextStep gives")
        files[file].nextOffset = offset + UInt64(length)
        inFlight.append(InFlight(file: file, offset: offset, length: length))
        inFlightBytes += length
    }

    /// The driver sent the `fileEnd` of `file`.
    public mutating func fileEndSent(file: Int) {
        files[file].endSent = true
    }

    /// The driver gives up on a file because its source changed while it was being sent (it tells the receiver with
    /// `fileResult` `sourceChanged`): no more of its chunks, and no `fileEnd`, are sent, not even after a corrupt
    /// acknowledgement. Chunks of it in flight count against the window until acknowledged or until its result
    /// comes, which the file waits for like any other.
    public mutating func fileAbandoned(file: Int) {
        files[file].abandoned = true
    }

    /// A chunk acknowledgement arrived: frees its window space, or asks to send again from a corrupt chunk. Throws
    /// for an acknowledgement of a chunk that is not in flight.
    public mutating func ackReceived(_ ack: ChunkAck) throws(TransferProtocolError) -> AckOutcome {
        let file = Int(ack.fileIndex)
        // Stopped here (cancelled, failed) or the file already ended: acknowledgements still in flight.
        if phase == .finished { return .late }
        if file >= 0, file < files.count, files[file].result != nil { return .late }
        guard let position = inFlight.firstIndex(where: { $0.file == file && $0.offset == ack.offset }) else {
            throw TransferProtocolError(
                "an acknowledgement for a chunk not in flight (file \(file), offset \(ack.offset))")
        }
        switch ack.status {
        case .stored:
            let chunk = inFlight.remove(at: position)
            inFlightBytes -= chunk.length
            files[file].corruptAcks = 0
            return .stored(file: file, bytes: chunk.length)
        case .corrupt:
            // An honest receiver fails the file after `maxCorruptCopies` corrupt copies of a chunk; a peer that
            // keeps asking for the same bytes again is stalling the transfer (and a broadcast) on purpose.
            files[file].corruptAcks += 1
            guard files[file].corruptAcks <= IncomingTransferMachine.maxCorruptCopies else {
                throw TransferProtocolError(
                    "more than \(IncomingTransferMachine.maxCorruptCopies) corrupt acknowledgements in a row (file "
                        + "\(file), offset \(ack.offset))")
            }
            // Go back N: the receiver drops every later chunk of this file until this one comes again.
            inFlight.removeAll { entry in
                guard entry.file == file, entry.offset >= ack.offset else { return false }
                inFlightBytes -= entry.length
                return true
            }
            if files[file].abandoned { return .late }  // nothing of it goes again
            files[file].nextOffset = ack.offset
            cursor = min(cursor, file)
            return .resend(file: file, offset: ack.offset)
        default:
            throw TransferProtocolError("unknown chunk status \(ack.status.rawValue)")
        }
    }

    /// The receiver's verdict on a file. Chunks of it still in flight no longer count against the window.
    public mutating func resultReceived(_ result: FileResult) throws(TransferProtocolError) {
        let file = Int(result.fileIndex)
        guard file < files.count, files[file].accepted else {
            throw TransferProtocolError("a result for file \(file), which is not part of the transfer")
        }
        guard files[file].result == nil else { throw TransferProtocolError("a second result for file \(file)") }
        files[file].result = result.status
        inFlight.removeAll { entry in
            guard entry.file == file else { return false }
            inFlightBytes -= entry.length
            return true
        }
        awaitingResults -= 1
        if awaitingResults == 0 { phase = .finished }
    }

    /// The transfer stopped (cancelled by either side, link lost).
    public mutating func stop() {
        phase = .finished
        inFlight.removeAll()
        inFlightBytes = 0
    }
}
