import FerrySession
import FerryStateMachines
import FerrySystem
import FerryWire
import Synchronization

/// The receiving side of one transfer from one peer.
struct IncomingTransfer: Sendable {
    enum Phase: Sendable {
        /// Waiting for the application's answer; any chunk now is a protocol error.
        case asking
        case receiving
    }

    var offer: Offer
    var peer: PeerInfo
    var phase: Phase
    var machine: IncomingTransferMachine?
    var files: [IncomingFile]
    /// The offer's folders (its folders section), validated: created when the offer is accepted.
    var folders: [[String]]
    /// Of `folders`, those created (or found there) and those that could not be.
    var foldersMade = 0
    var foldersFailed = 0
    var codecs: CodecSet = []
    /// Set when the transfer is cancelled or its sender leaves while held files are hashed for it (rule 10).
    var hashStop: HashStop?
    /// Which offer this record is (`IncomingTransfers.nextGeneration`): acceptance awaits (held files, staged
    /// prefixes) and then looks the record up by key, and a record under the same key made meanwhile is another
    /// offer, never to be accepted with this one's answer, plans and reservations.
    var generation: UInt64 = 0
    /// The last chunk of this transfer stored (its raw bytes), the prefix a `zstdPrefixed` chunk that follows it
    /// needs (PROTOCOL.md 11.10 rule 3); nil after a corrupt one. One chunk per transfer.
    var previousChunk: (file: Int, offset: UInt64, raw: ArraySlice<UInt8>)?
    /// Verified files waiting to be synced and renamed into place: the next batch of the publish loop.
    var pending: [Int] = []
    /// A publish loop is running for this transfer (`TransferEngine.publishPending`), and who waits for it to end.
    var isPublishing = false
    var publishWaiters: [CheckedContinuation<Void, Never>] = []
    var meter: ProgressMeter
    var started: ContinuousClock.Instant
    var bytesDone: UInt64 = 0
    var wireBytes: UInt64 = 0
    var resumedBytes: UInt64 = 0
    var filesSucceeded = 0
    var filesFailed = 0
    var currentFile = 0
    /// The last file whose staged file was asked for ahead of its first chunk (`TransferEngine.stageAhead`).
    var stagedAheadThrough = 0
    /// Counted once at acceptance and as files end, so no event has to scan every file.
    var acceptedCount = 0
    var totalBytes: UInt64 = 0
    var endedCount = 0
    /// Cancelled or failing here: no frame of it goes out any more, and its chunks are dropped.
    var isEnding = false
    /// Ended (`TransferEngine.cancelIncoming`), its outcome waiting for the writes queued before the end: what the
    /// outcome says, and the bound on that wait (`IncomingTransfers.maxEndingWait`).
    var endsAs: (failure: String, stop: TransferStop)?
    var endingTimer: Task<Void, Never>?
    /// The swarm this side is a member of through this transfer (PROTOCOL.md 11.11): chunks then come in any order.
    var swarmID: SwarmID?
    /// Whether staged data of files that did not end stays for a resume when the transfer stops: a ferry sender's
    /// does (its staged names are resume keys); a foreign peer's is removed, as it can never be resumed.
    var keepsStaged = true
}

/// One offered file on the receiving side.
struct IncomingFile: Sendable {
    var components: [String]
    var size: UInt64
    var key: String
    var accepted = false
    var resumeOffset: UInt64 = 0
    /// Bytes of the resumed prefix that did not match the sender's digest and are fetched again (a swarm member,
    /// PROTOCOL.md 11.11 rule 4): sent again after all, so not among the file's resumed bytes.
    var prefixDropped: UInt64 = 0
    var staged: RegularFile?
    /// The first failed eviction of write-behind on the staged file (`Writeback`): checked before verifying.
    let writebackFailure = WritebackFailure()
    /// This transfer's hold on the staged file, from acceptance until the file is published or failed.
    var reservation: StagedReservation?
    /// The file digest (PROTOCOL.md 11.7) of the resumed prefix and the chunks stored so far.
    var hasher: FileDigest?
    /// Taking chunks in any order (a swarm member): the digests of the chunks stored after the resumed prefix, by
    /// chunk index, fed to `hasher` in order when the file is complete.
    var chunkDigests: [Int: [UInt8]] = [:]
    /// The verified file digest, once it matched the sender's.
    var digest: [UInt8]?
    var stored: UInt64 = 0
    /// The bytes written to the staged file in this transfer, counted on the I/O queue as each write completes (a
    /// chunk is `stored` when its write is queued): what stays staged for a resume if the transfer stops.
    let written = StagedBytes()
    var ended = false

    /// The bytes of this file not sent again: its resumed prefix, less what of it was fetched again
    /// (`FileOutcome.resumedBytes`; the transfer's `resumedBytes` is their sum).
    var resumedBytes: UInt64 { resumeOffset - min(prefixDropped, resumeOffset) }
    /// Handed to the application in memory once verified (`TransferConfiguration.memoryDelivery`).
    var inMemory = false
    /// With `inMemory`: published as a file as well.
    var alsoPublish = false
    /// The name under which the receive directory already holds this file, byte for byte as the offer's digest says
    /// (PROTOCOL.md 11.10 rule 10): answered at its size, nothing staged, ended as identical once its `fileEnd`
    /// carries the same digest.
    var alreadyThere: (held: HeldFile, digest: [UInt8])?
    /// How the file is checked before it is published: ferry's chunk digests, or (a foreign peer's file) the whole
    /// file's SHA-256 computed as it is written (`wholeHasher`), compared with the sender's or with nothing.
    var verification: FileVerification = .fileDigest
    /// A foreign peer's file: the SHA-256 of its bytes, fed chunk by chunk in offset order (nil for ferry files).
    var wholeHasher: SHA256Hasher?
    /// A foreign peer's file with `verification` `sha256`: the digest its sender gave (else empty).
    var givenSHA256: [UInt8] = []
    /// A foreign peer's file: bytes of a piece past the last whole chunk, waiting for the next piece (less than a
    /// chunk), and whether a piece of it is being taken now (`ForeignPeer.write`).
    var partialChunk: [UInt8] = []
    var isTakingPiece = false
    /// A foreign peer's file: its end (or its failure) was taken from the adapter; a second one is refused `ended`.
    var endTaken = false
}

/// A count of bytes written to one staged file, shared by the engine and the writes it queues.
final class StagedBytes: Sendable {
    private let count = Atomic<UInt64>(0)

    /// Counts `bytes` more (on the I/O queue, once a write completed).
    func add(_ bytes: Int) {
        count.wrappingAdd(UInt64(bytes), ordering: .relaxed)
    }

    /// The bytes counted so far.
    var value: UInt64 { count.load(ordering: .relaxed) }
}
