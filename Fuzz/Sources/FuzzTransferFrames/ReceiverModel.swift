import FerryStateMachines
import FerryWire
import FuzzSupport

/// The receiving engine's use of `IncomingTransferMachine`, without files: accept an offer's valid names, then for
/// each chunk ask the machine, inflate within the declared length, check the chunk digest and report stored or corrupt.
///
/// Why: the machine's indices and offsets come straight from peer frames; this drives it with hostile sequences
/// (chunks for files never offered, out of order, past the end, ends twice) and checks its offsets stay in bounds.
struct ReceiverModel {
    private var offer: Offer?
    private var machine: IncomingTransferMachine?

    /// Handles one decoded message; false when it is a protocol error (the link would close).
    mutating func receive(_ message: TransferMessage) -> Bool {
        switch message {
        case .offer(let offer):
            guard self.offer == nil else { return false }
            let accepted = offer.files.map { file in
                if case .success = NameValidator.components(of: file.path) { true } else { false }
            }
            self.offer = offer
            machine = IncomingTransferMachine(
                sizes: offer.files.map(\.size), accepted: accepted,
                resumeOffsets: Array(repeating: 0, count: offer.files.count), chunkSize: Int(offer.chunkSize))
            return true
        case .chunk(let chunk):
            return receive(chunk)
        case .fileEnd(let end):
            guard var machine, end.transferID == offer?.transferID else { return false }
            defer { self.machine = machine }
            guard let actions = try? machine.fileEndArrived(file: Int(end.fileIndex), digest: end.digest) else {
                return false
            }
            perform(actions, on: &machine)
            return true
        case .offerReply, .chunkAck, .fileResult:
            return false  // Only a receiver sends these.
        case .cancel:
            return false
        case .swarmMembers, .chunkDigests, .swarmHave, .swarmRequest, .swarmRefuse, .swarmReport:
            return false  // This receiver replied without `relay`: no swarm frame may follow.
        }
    }

    private mutating func receive(_ chunk: Chunk) -> Bool {
        guard var machine, let offer, chunk.transferID == offer.transferID else { return false }
        defer { self.machine = machine }
        let file = Int(chunk.fileIndex)
        let rawLength = Int(chunk.rawLength)
        guard let verdict = try? machine.chunkArrived(file: file, offset: chunk.offset, rawLength: rawLength) else {
            return false
        }
        guard verdict == .process else { return true }
        Invariant.check(chunk.offset == machine.expectedOffset(of: file), "processing a chunk at the wrong offset")
        let raw: [UInt8]?
        switch chunk.codec {
        case .none: raw = Array(chunk.data)
        case .zlib: raw = try? ChunkInflater.inflate(chunk.data, algorithm: .zlib, rawLength: rawLength)
        case .zstd: raw = try? ChunkInflater.inflate(chunk.data, algorithm: .zstd, rawLength: rawLength)
        default: return false  // Never negotiated.
        }
        if let raw {
            Invariant.check(raw.count == rawLength, "a chunk inflated to \(raw.count) of \(rawLength) bytes")
        }
        if let raw, FileDigest.chunkDigest(raw) == chunk.sha256 {
            perform(machine.chunkStored(file: file, rawLength: rawLength), on: &machine)
        } else {
            perform(machine.chunkCorrupt(file: file), on: &machine)
        }
        let size = offer.files[file].size
        Invariant.check(machine.expectedOffset(of: file) <= size, "expected offset past the end of file \(file)")
        return true
    }

    private func perform(_ actions: [IncomingTransferMachine.Action], on machine: inout IncomingTransferMachine) {
        for action in actions {
            switch action {
            case .verify(let file, let digest):
                Invariant.check(machine.expectedOffset(of: file) == offer?.files[file].size, "verify before the end")
                Invariant.check(digest.count == FileEnd.digestLength, "digest of \(digest.count) bytes")
                machine.fileEnded(file)
            case .acknowledge, .fail:
                break
            }
        }
    }
}
