import FerryWire

/// The receiving side of one transfer from one peer: which chunk is expected for each file, what to do with a
/// corrupt one (go-back-N, at most `maxCorruptCopies` copies of a chunk), and when a file can be verified.
///
/// Pure: the driver inflates each chunk and checks its digest, then reports `chunkStored` or `chunkCorrupt`; the
/// returned actions say which acknowledgements to send and which files to verify and publish.
public struct IncomingTransferMachine: Sendable {
    /// Copies of one chunk that may arrive corrupt before the file fails.
    public static let maxCorruptCopies = 3

    /// What to do with a chunk that arrived.
    public enum ChunkVerdict: Equatable, Sendable {
        /// Check, store and acknowledge it.
        case process
        /// Drop it silently: an earlier chunk of the file was corrupt, or the file already ended.
        case discard
    }

    /// What the driver must do after an event, in order.
    public enum Action: Equatable, Sendable {
        case acknowledge(file: Int, offset: UInt64, status: ChunkStatus)
        /// Every byte is stored and the digest is known: compare, then publish.
        case verify(file: Int, expectedDigest: [UInt8])
        /// The file cannot be completed.
        case fail(file: Int, status: FileStatus, detail: String)
    }

    private struct FileState {
        var size: UInt64
        var accepted: Bool
        var expectedOffset: UInt64
        var corruptCopies = 0
        var discarding = false
        var digest: [UInt8]?
        var ended = false
    }

    /// The offer's chunk size: every chunk but a file's last is this long.
    public let chunkSize: Int
    private var files: [FileState]

    /// A machine for the accepted files of an offer: their sizes, decisions and resume offsets (one each, in the offer's order).
    public init(sizes: [UInt64], accepted: [Bool], resumeOffsets: [UInt64], chunkSize: Int) {
        precondition(sizes.count == accepted.count && sizes.count == resumeOffsets.count)
        self.chunkSize = chunkSize
        self.files = sizes.indices.map { index in
            FileState(size: sizes[index], accepted: accepted[index], expectedOffset: resumeOffsets[index])
        }
    }

    /// Every accepted file has ended (published or failed).
    public var isFinished: Bool { files.allSatisfy { !$0.accepted || $0.ended } }

    /// Where the next chunk of `file` must start (chunks come in order).
    public func expectedOffset(of file: Int) -> UInt64 { files[file].expectedOffset }

    /// A chunk header arrived: whether to process or drop it. Throws for a chunk of a file that was not accepted,
    /// out of order, or of the wrong length.
    public mutating func chunkArrived(file: Int, offset: UInt64, rawLength: Int) throws(TransferProtocolError)
        -> ChunkVerdict
    {
        guard file >= 0, file < files.count, files[file].accepted else {
            throw TransferProtocolError("a chunk for file \(file), which was not accepted")
        }
        let state = files[file]
        if state.ended { return .discard }
        if offset == state.expectedOffset {
            let expectedLength = min(UInt64(chunkSize), state.size - min(offset, state.size))
            guard offset < state.size, UInt64(rawLength) == expectedLength else {
                throw TransferProtocolError("a chunk of \(rawLength) bytes at \(offset) of a \(state.size)-byte file")
            }
            return .process
        }
        if state.discarding, offset > state.expectedOffset { return .discard }
        throw TransferProtocolError("a chunk at offset \(offset) of file \(file), expected \(state.expectedOffset)")
    }

    /// The chunk at the expected offset passed its checks and is written.
    public mutating func chunkStored(file: Int, rawLength: Int) -> [Action] {
        let offset = files[file].expectedOffset
        files[file].expectedOffset += UInt64(rawLength)
        files[file].corruptCopies = 0
        files[file].discarding = false
        return [.acknowledge(file: file, offset: offset, status: .stored)] + verifyIfComplete(file)
    }

    /// The chunk at the expected offset failed its digest or inflation.
    public mutating func chunkCorrupt(file: Int) -> [Action] {
        let offset = files[file].expectedOffset
        files[file].corruptCopies += 1
        guard files[file].corruptCopies < Self.maxCorruptCopies else {
            files[file].ended = true
            return [
                .fail(
                    file: file, status: .corruptChunks,
                    detail: "the chunk at offset \(offset) arrived corrupt \(Self.maxCorruptCopies) times")
            ]
        }
        files[file].discarding = true
        return [.acknowledge(file: file, offset: offset, status: .corrupt)]
    }

    /// The sender's `fileEnd` arrived with the file's SHA-256: the actions (verify when every chunk is stored).
    /// Throws for a file that was not accepted or ended twice.
    public mutating func fileEndArrived(file: Int, digest: [UInt8]) throws(TransferProtocolError) -> [Action] {
        guard file >= 0, file < files.count, files[file].accepted else {
            throw TransferProtocolError("the end of file \(file), which was not accepted")
        }
        guard !files[file].ended else { return [] }
        guard files[file].digest == nil else { throw TransferProtocolError("a second end of file \(file)") }
        files[file].digest = digest
        return verifyIfComplete(file)
    }

    /// The file was published or failed: later chunks of it are discarded.
    public mutating func fileEnded(_ file: Int) {
        files[file].ended = true
    }

    private func verifyIfComplete(_ file: Int) -> [Action] {
        let state = files[file]
        guard !state.ended, state.expectedOffset == state.size, let digest = state.digest else { return [] }
        return [.verify(file: file, expectedDigest: digest)]
    }
}
