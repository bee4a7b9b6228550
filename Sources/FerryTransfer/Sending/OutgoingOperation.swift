import FerrySession
import FerryStateMachines
import FerryWire

/// One `send` call: the files, the shared chunk source, and one machine per peer.
///
/// A class, owned by the engine's `operations` table and touched only on the engine's actor: as a struct, every
/// `operations[id]?.source` copied the whole operation out of the table and every `operations[id]?.x = y` moved it
/// into a coroutine frame too large for the caller's buffer (a `malloc` each), many times a small file.
final class OutgoingOperation {
    let offer: Offer
    let files: [PreparedFile]
    let source: ChunkSource
    var peers: [PeerID: OutgoingPeer]
    /// The broadcast's swarm (PROTOCOL.md 11.11), when the offer has one.
    var swarm: SwarmSending? = nil
    /// The whole send is being cancelled: a member that ends now leaves nothing to seed anew.
    var cancelled = false

    init(offer: Offer, files: [PreparedFile], source: ChunkSource, peers: [PeerID: OutgoingPeer]) {
        self.offer = offer
        self.files = files
        self.source = source
        self.peers = peers
    }
}

/// The sending side of one transfer with one peer: its machine, the pump waiting for news, and its numbers.
struct OutgoingPeer: Sendable {
    var info: PeerInfo
    var machine: OutgoingTransferMachine
    var codecs: CodecSet = []
    /// The pump, suspended until a frame from the peer (or the end) changes what it can do.
    var waiter: CheckedContinuation<Void, Never>?
    /// The pump waits because the transfers to this peer together have `maxInFlightPerPeer` unacknowledged: news of
    /// any of them wakes it.
    var waitsForPeerRoom = false
    var failure: String?
    /// How the transfer stopped before its end, set with `failure` (`TransferOutcome.stop`).
    var stop: TransferStop?
    var deniedReason: String?
    var meter: ProgressMeter
    var started: ContinuousClock.Instant
    var bytesDone: UInt64 = 0
    var resumedBytes: UInt64 = 0
    /// Bytes and number of the files the receiver accepted.
    var acceptedBytes: UInt64 = 0
    var acceptedFiles = 0
    var fileBytesDone: [UInt64]
    /// Where the reply had each accepted file start: the bytes of it not sent again (`FileOutcome.resumedBytes`).
    var resumeOffsets: [Int: UInt64] = [:]
    /// Of a swarm member's resumed prefix, the bytes it asked for again (their copy failed the digest there,
    /// PROTOCOL.md 11.11 rule 4): sent again after all, so not among the file's resumed bytes.
    var prefixDropped: [Int: UInt64] = [:]
    var wireBytes: UInt64 = 0
    var chunkBytes: UInt64 = 0
    /// Files given up here (their source changed), with the message for the user: their result from the receiver
    /// is reported with it.
    var abandoned: [Int: String] = [:]
    /// The file digests sent in this peer's `fileEnd`s (reported with each file's result, without a trip to the
    /// chunk source per file).
    var sentDigests: [Int: [UInt8]] = [:]
    var filesSucceeded = 0
    /// Of those, files the receiver already held byte for byte (`FileResult.identical`).
    var filesAlreadyThere = 0
    /// Their sizes added up (counted in `resumedBytes`: none of it was sent).
    var alreadyThereBytes: UInt64 = 0
    var filesFailed = 0
    /// Of `bytesDone`, bytes the receiver stored from other members of the swarm (`storedFromPeer`).
    var relayedBytes: UInt64 = 0
    /// A swarm member's frames (digests, member lists, chunks) in the order the seeding put them, sent by its pump.
    var outbox: [SwarmFrame] = []
    /// Chunk data bytes in `outbox`.
    var outboxBytes = 0
}
