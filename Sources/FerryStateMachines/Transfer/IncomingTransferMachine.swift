import FerryWire

/// The receiving side of one transfer from one peer: which chunk is expected for each file, what to do with a
/// corrupt one (go-back-N, at most `maxCorruptCopies` copies of a chunk), and when a file can be verified.
///
/// A member of a swarm (PROTOCOL.md 11.11) takes chunks in any order (`anyOrder`): from the sender as its seed, from
/// other members, answers to its requests. It keeps a bitmap of stored chunks instead of one expected offset; a
/// chunk stored already is dropped, and a corrupt one asks for that chunk alone (no go-back-N).
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
        /// With `anyOrder`: corrupt copies per chunk index, and chunks stored.
        var corruptByChunk: [Int: Int] = [:]
        var storedChunks = 0
    }

    /// The offer's chunk size: every chunk but a file's last is this long.
    public let chunkSize: Int
    /// Chunks are taken in any order (a swarm member); `expectedOffset` is then the resume offset.
    public let anyOrder: Bool
    private var files: [FileState]
    /// Accepted files that have not ended: `isFinished` is asked after every file, so it must not walk them all.
    private var openFiles: Int
    /// With `anyOrder`: the chunks stored (a resumed prefix counts).
    private var stored: ChunkBitmap

    /// A machine for the accepted files of an offer: their sizes, decisions and resume offsets (one each, in the
    /// offer's order); `anyOrder` for a swarm member.
    public init(sizes: [UInt64], accepted: [Bool], resumeOffsets: [UInt64], chunkSize: Int, anyOrder: Bool = false) {
        precondition(sizes.count == accepted.count && sizes.count == resumeOffsets.count)
        self.chunkSize = chunkSize
        self.anyOrder = anyOrder
        self.files = sizes.indices.map { index in
            FileState(size: sizes[index], accepted: accepted[index], expectedOffset: resumeOffsets[index])
        }
        openFiles = accepted.filter { $0 }.count
        let chunk = UInt64(chunkSize)
        stored = ChunkBitmap(chunkCounts: anyOrder ? sizes.map { Int(($0 + chunk - 1) / chunk) } : sizes.map { _ in 0 })
        guard anyOrder else { return }
        for file in sizes.indices where accepted[file] {
            // A prefix ends on a chunk boundary, or at the file's end (then its last, short chunk is held too).
            let held = resumeOffsets[file] >= sizes[file] ? stored.chunkCounts[file] : Int(resumeOffsets[file] / chunk)
            for index in 0..<held {
                stored.insert(SwarmChunk(file: file, index: index))
                files[file].storedChunks += 1
            }
        }
    }

    /// With `anyOrder`: whether the chunk at `offset` of `file` is stored and the file has not ended yet (a copy of
    /// it that arrives now is acknowledged; after the file's end nothing of it is).
    public func isStored(file: Int, offset: UInt64) -> Bool {
        let chunk = SwarmChunk(file: file, index: Int(offset / UInt64(chunkSize)))
        return anyOrder && stored.isValid(chunk) && stored.contains(chunk) && !files[file].ended
    }

    /// Every accepted file has ended (published or failed).
    public var isFinished: Bool { openFiles == 0 }

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
        if anyOrder {
            let expectedLength = min(UInt64(chunkSize), state.size - min(offset, state.size))
            guard offset % UInt64(chunkSize) == 0, offset < state.size, UInt64(rawLength) == expectedLength else {
                throw TransferProtocolError(
                    "a chunk of \(rawLength) bytes at \(offset) of a \(state.size)-byte file, not a chunk of it")
            }
            return isStored(file: file, offset: offset) ? .discard : .process
        }
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
        chunkStored(file: file, offset: files[file].expectedOffset, rawLength: rawLength)
    }

    /// The chunk at `offset` (the expected one unless `anyOrder`) passed its checks and is written; `fromPeer`: it
    /// came from another swarm member (acknowledged `storedFromPeer`). Empty when it was stored already.
    public mutating func chunkStored(file: Int, offset: UInt64, rawLength: Int, fromPeer: Bool = false) -> [Action] {
        let status: ChunkStatus = fromPeer ? .storedFromPeer : .stored
        guard anyOrder else {
            precondition(offset == files[file].expectedOffset, "chunks are stored in order")
            files[file].expectedOffset += UInt64(rawLength)
            files[file].corruptCopies = 0
            files[file].discarding = false
            return [.acknowledge(file: file, offset: offset, status: status)] + verifyIfComplete(file)
        }
        let index = Int(offset / UInt64(chunkSize))
        guard stored.insert(SwarmChunk(file: file, index: index)) else { return [] }
        files[file].storedChunks += 1
        files[file].corruptByChunk[index] = nil
        return [.acknowledge(file: file, offset: offset, status: status)] + verifyIfComplete(file)
    }

    /// With `anyOrder`: the chunk at `offset` of `file`, counted stored (a resumed prefix's), is not that chunk: it
    /// failed the sender's digest (a swarm member checks its prefix, PROTOCOL.md 11.11). It counts stored no more, so
    /// a copy that arrives (from the sender or another member) is stored and acknowledged, and the file is verified
    /// only once it is. False when it was not counted stored or its file ended.
    @discardableResult
    public mutating func storedChunkFailed(file: Int, offset: UInt64) -> Bool {
        let chunk = SwarmChunk(file: file, index: Int(offset / UInt64(chunkSize)))
        guard anyOrder, stored.isValid(chunk), !files[file].ended, stored.remove(chunk) else { return false }
        files[file].storedChunks -= 1
        return true
    }

    /// The chunk at the expected offset failed its digest or inflation.
    public mutating func chunkCorrupt(file: Int) -> [Action] {
        chunkCorrupt(file: file, offset: files[file].expectedOffset)
    }

    /// The chunk at `offset` (the expected one unless `anyOrder`) came from the sender and failed its digest or
    /// inflation. With `anyOrder` only that chunk is asked for again.
    public mutating func chunkCorrupt(file: Int, offset: UInt64) -> [Action] {
        if anyOrder {
            let index = Int(offset / UInt64(chunkSize))
            let copies = files[file].corruptByChunk[index, default: 0] + 1
            files[file].corruptByChunk[index] = copies
            guard copies < Self.maxCorruptCopies else {
                end(file)
                return [
                    .fail(
                        file: file, status: .corruptChunks,
                        detail: "the chunk at offset \(offset) arrived corrupt \(Self.maxCorruptCopies) times")
                ]
            }
            return [.acknowledge(file: file, offset: offset, status: .corrupt)]
        }
        files[file].corruptCopies += 1
        guard files[file].corruptCopies < Self.maxCorruptCopies else {
            end(file)
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
        end(file)
    }

    /// Marks `file` ended, counting it once.
    private mutating func end(_ file: Int) {
        guard !files[file].ended else { return }
        files[file].ended = true
        if files[file].accepted { openFiles -= 1 }
    }

    private func verifyIfComplete(_ file: Int) -> [Action] {
        let state = files[file]
        let complete =
            anyOrder ? state.storedChunks == stored.chunkCounts[file] : state.expectedOffset == state.size
        guard !state.ended, complete, let digest = state.digest else { return [] }
        return [.verify(file: file, expectedDigest: digest)]
    }
}
