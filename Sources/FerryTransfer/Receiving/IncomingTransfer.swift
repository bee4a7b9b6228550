import FerrySession
import FerryStateMachines
import FerrySystem
import FerryWire

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
    var codecs: CodecSet = []
    /// Verified files waiting to be synced and renamed into place, a batch at a time.
    var pending: [Int] = []
    var pendingBytes: UInt64 = 0
    var meter: ProgressMeter
    var started: ContinuousClock.Instant
    var bytesDone: UInt64 = 0
    var wireBytes: UInt64 = 0
    var resumedBytes: UInt64 = 0
    var filesSucceeded = 0
    var filesFailed = 0
    var currentFile = 0
    /// Counted once at acceptance and as files end, so no event has to scan every file.
    var acceptedCount = 0
    var totalBytes: UInt64 = 0
    var endedCount = 0
    /// Cancelled or failing here: no frame of it goes out any more, and its chunks are dropped.
    var isEnding = false
    /// Raw bytes handed to the I/O queue and not yet written: bounded, whatever the sender does with its window.
    var queuedBytes = 0

    /// Accepted files neither ended nor waiting in the publish batch: when none is left, the batch goes.
    var outstanding: Int { acceptedCount - endedCount - pending.count }
}

/// One offered file on the receiving side.
struct IncomingFile: Sendable {
    var components: [String]
    var size: UInt64
    var key: String
    var accepted = false
    var resumeOffset: UInt64 = 0
    var staged: RegularFile?
    /// This transfer's hold on the staged file, from acceptance until the file is published or failed.
    var reservation: StagedReservation?
    var hasher: SHA256Hasher?
    var stored: UInt64 = 0
    var ended = false
}
