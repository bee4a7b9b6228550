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

    var acceptedCount: Int { files.filter(\.accepted).count }
    var totalBytes: UInt64 { files.reduce(0) { $0 + ($1.accepted ? $1.size : 0) } }
}

/// One offered file on the receiving side.
struct IncomingFile: Sendable {
    var components: [String]
    var size: UInt64
    var key: String
    var accepted = false
    var resumeOffset: UInt64 = 0
    var staged: RegularFile?
    var hasher: SHA256Hasher?
    var stored: UInt64 = 0
    var ended = false
}
