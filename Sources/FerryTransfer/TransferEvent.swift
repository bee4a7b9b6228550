import FerrySession
import FerryWire
import Foundation

/// Which way a transfer goes, seen from this engine.
public enum TransferDirection: String, Sendable {
    /// This engine sends.
    case sending
    /// This engine receives.
    case receiving
}

/// An offer waiting for the application's answer (`OfferPolicy.ask`).
public struct IncomingOffer: Sendable {
    /// The transfer, as the sender named it.
    public var transferID: TransferID
    /// Who offers.
    public var peer: PeerInfo
    /// The offered entries, in order.
    public var files: [OfferedFile]
    /// Their sizes added up.
    public var totalBytes: UInt64
    /// When it is denied unless answered.
    public var deadline: ContinuousClock.Instant
}

/// Where one transfer with one peer stands.
public struct TransferProgress: Sendable, Equatable {
    /// The transfer.
    public var transferID: TransferID
    /// The peer on the other end.
    public var peer: PeerInfo
    /// Sending or receiving.
    public var direction: TransferDirection
    /// The file being moved now (index into the offer) and its name in the transfer.
    public var fileIndex: Int
    /// Its name in the transfer.
    public var fileName: String
    /// Bytes of that file moved (resumed bytes included).
    public var fileBytesDone: UInt64
    /// That file's size.
    public var fileSize: UInt64
    /// All accepted files of the transfer.
    public var bytesDone: UInt64
    /// Bytes of all accepted files.
    public var totalBytes: UInt64
    /// Accepted files ended so far.
    public var filesDone: Int
    /// Accepted files.
    public var fileCount: Int
    /// Bytes per second over the last few seconds; 0 until known.
    public var rate: Double
    /// Seconds left at `rate`; nil until known.
    public var secondsLeft: Double?
}

/// How one file of a transfer ended.
public struct FileOutcome: Sendable, Equatable {
    /// The transfer.
    public var transferID: TransferID
    /// The peer on the other end.
    public var peer: PeerInfo
    /// Sending or receiving.
    public var direction: TransferDirection
    /// Its index in the offer.
    public var fileIndex: Int
    /// Its name in the transfer (the offered path).
    public var fileName: String
    /// Its size in bytes.
    public var size: UInt64
    /// The name it was published under (receiver's view, relative to its directory); nil when it failed.
    public var publishedName: String?
    /// Nil on success; otherwise what went wrong, for a person.
    public var failure: String?
    /// Bytes of this file that were already there from an interrupted transfer.
    public var resumedBytes: UInt64
    /// The receiver already held this file byte for byte under `publishedName`: nothing new was published there
    /// (no "name (1)"), and the outcome is a success.
    public var alreadyThere = false
    /// Receiving, under `TransferConfiguration.memoryDelivery`: the entry's verified bytes, handed over in memory
    /// (`publishedName` is nil then, unless `MemoryDelivery.alsoPublish` published it too). Nil otherwise.
    public var payload: Data? = nil
    /// The media type the offer gave the entry ("image/png"; empty when unknown).
    public var mediaType = ""
    /// The file digest (PROTOCOL.md 11.7, what `ferry hash` prints): the one the receiver verified, or the one the
    /// sender sent for a file the receiver published; nil otherwise. For a file from a peer of another protocol
    /// (`verification` `sha256` or `size`), the plain SHA-256 of the file's bytes.
    public var digest: [UInt8]? = nil
    /// How the received bytes were checked before they were published: ferry's chunk and file digests, the whole
    /// file's SHA-256 a peer of another protocol gave, or its size alone (such a peer gave no digest).
    public var verification: FileVerification = .fileDigest
    /// Receiving: published in place of the version the same sender delivered under that name before, unchanged
    /// since (an offer with the flag `replaces`, PROTOCOL.md 11.10 rule 11: `ferry watch`).
    public var replaced = false
}

/// How a received file was checked before it was published (DESIGN.md section 9: what a protocol cannot give is
/// said, never faked).
public enum FileVerification: String, Sendable, Equatable {
    /// Each chunk's SHA-256 and the file digest over them (PROTOCOL.md 11.7): every ferry transfer.
    case fileDigest
    /// The SHA-256 of the whole file, as the sender (a peer of another protocol) gave it, computed as it was written.
    case sha256
    /// Its size alone: the sender gave no digest (an older LocalSend app).
    case size
}

/// How a whole transfer with one peer ended.
public struct TransferOutcome: Sendable, Equatable {
    /// The transfer.
    public var transferID: TransferID
    /// The peer on the other end.
    public var peer: PeerInfo
    /// Sending or receiving.
    public var direction: TransferDirection
    /// Files published (or delivered in memory) at the receiver.
    public var filesSucceeded: Int
    /// Files that failed (or never ended).
    public var filesFailed: Int
    /// Files the receiver chose not to take.
    public var filesSkipped: Int
    /// File bytes moved in this run (resumed bytes not counted).
    public var bytes: UInt64
    /// Chunk data bytes on the wire (after compression), re-sent chunks included.
    public var wireBytes: UInt64
    /// The raw bytes those chunks carried (before compression), re-sent chunks included.
    public var chunkBytes: UInt64
    /// Bytes that were already there from an interrupted transfer (and the whole size of each file the receiver held
    /// already, found before its data moved: PROTOCOL.md 11.10 rule 10).
    public var resumedBytes: UInt64
    /// From the accepting reply (not the offer) to the end.
    public var duration: Duration
    /// Nil when the transfer ran to its end (individual files may still have failed); else why it stopped.
    public var failure: String?
    /// Of `filesSucceeded`, files the receiver already held byte for byte under their name (sending side).
    public var filesAlreadyThere = 0
    /// When the peer denied the offer (sending): its reason, as in `failure`'s "the offer was denied (...)".
    public var deniedReason: String? = nil
    /// Of `bytes`, raw bytes the receiver stored from other recipients of a broadcast (the swarm, PROTOCOL.md
    /// 11.11) rather than from the sender: by its `storedFromPeer` acknowledgements when sending, by what it fetched
    /// when receiving. 0 outside a swarm.
    public var relayedBytes: UInt64 = 0
    /// Receiving in a swarm: raw bytes this side served to other recipients. 0 otherwise.
    public var servedBytes: UInt64 = 0
    /// Sending to a member of a swarm: the most raw chunk bytes the sender had decided to send it and not yet had
    /// acknowledged at any one time (seeds, answers to its requests, copies). What the sender held for it (its outbox,
    /// its link's write queue) was part of these; its window bounds them. 0 otherwise.
    public var peakInFlightBytes = 0
    /// The sizes of the files the receiver accepted, added up: what the transfer was to move.
    public var acceptedBytes: UInt64 = 0
    /// Of `resumedBytes`, the sizes of the files the receiver held already (`filesAlreadyThere`); the rest was resumed
    /// from data staged by an earlier, interrupted transfer.
    public var alreadyThereBytes: UInt64 = 0
    /// For a transfer that stopped before its end (`stop`): the bytes of the accepted files that did not end which
    /// the receiver had verified, their resumed prefixes included. Receiving: what this side keeps staged. Sending:
    /// what the receiver acknowledged (it may hold a little more, acknowledgements in flight). A receiver keeps them
    /// staged after a cancel (PROTOCOL.md 11.10 rule 7), and the reference receiver after a lost link too, so that a
    /// later send resumes from them; 0 for a transfer that ran to its end.
    public var keptBytes: UInt64 = 0
    /// How the transfer stopped before its end; nil when it ran to its end or was denied.
    public var stop: TransferStop? = nil
    /// The offer's empty folders (its folders section, PROTOCOL.md 11.3): receiving, those created or found there
    /// when the offer was accepted; sending, those offered (the receiver does not report them).
    public var emptyFolders = 0
    /// Receiving: the offer's folders that could not be created (a file or a symbolic link in the way).
    public var emptyFoldersFailed = 0

    /// Every offered file was published.
    public var isSuccess: Bool { failure == nil && filesFailed == 0 && filesSkipped == 0 }
    /// Raw chunk bytes over wire bytes (1 when nothing was compressed).
    public var compressionRatio: Double { wireBytes == 0 ? 1 : Double(chunkBytes) / Double(wireBytes) }
}

/// How a transfer with one peer stopped before its end (`TransferOutcome.stop`): who ended it and why, so that an
/// application can tell a person what happened and what was kept.
public enum TransferStop: Sendable, Equatable {
    /// The peer sent `transferCancel` with this reason (`shuttingDown` when it was stopped by SIGTERM,
    /// `cancelledByUser` by Ctrl-C). A receiver that cancels keeps its staged data (PROTOCOL.md 11.10 rule 7).
    case cancelledByPeer(CancelReason)
    /// This side ended it, with this reason (told to the peer when the link allowed).
    case cancelledHere(CancelReason)
    /// The link to the peer went without a cancel (lost, reset, or a write to it failed).
    case linkLost
}

/// Everything a transfer engine reports, in order, on its `events` stream.
public enum TransferEvent: Sendable {
    /// Under `OfferPolicy.ask`: answer with `TransferEngine.respond(to:from:accept:)`.
    case offerReceived(IncomingOffer)
    /// The offer was accepted (by the peer when sending, by this side when receiving); chunks flow.
    case started(
        transferID: TransferID, peer: PeerInfo, direction: TransferDirection, files: [OfferedFile],
        accepted: [Bool], resumeOffsets: [UInt64])
    /// The offer was denied (by the peer when sending, by this side when receiving).
    case denied(transferID: TransferID, peer: PeerInfo, direction: TransferDirection, reason: String)
    /// Bytes moved with one peer, at most every `TransferConfiguration.progressInterval`.
    case progress(TransferProgress)
    /// One entry ended with one peer: published, delivered in memory (`FileOutcome.payload`), or failed.
    case fileFinished(FileOutcome)
    /// A transfer with one peer ended (each peer of a broadcast has its own).
    case finished(TransferOutcome)
    /// A recipient of a broadcast relayed a chunk that did not match the sender's digest (or broke another swarm
    /// rule): it is cut off from the swarm for this transfer (PROTOCOL.md 11.11 rule 5).
    case relayerCutOff(RelayerReport)
    /// A receiver that had every file of a broadcast and went on serving the other receivers stopped (the sender's
    /// list left it out, or its link to the sender went): what it relayed each way in all. Its `finished` outcome
    /// counted only what was served until its last file arrived.
    case swarmEnded(SwarmTotals)
}

/// What a receiver relayed in one broadcast, each way, in all.
public struct SwarmTotals: Sendable, Equatable {
    /// The transfer with the sender.
    public var transferID: TransferID
    /// The sender of the broadcast.
    public var sender: PeerInfo
    /// Raw bytes stored from other receivers.
    public var relayedBytes: UInt64
    /// Raw bytes served to other receivers.
    public var servedBytes: UInt64

    /// Totals with every field given.
    public init(transferID: TransferID, sender: PeerInfo, relayedBytes: UInt64, servedBytes: UInt64) {
        self.transferID = transferID
        self.sender = sender
        self.relayedBytes = relayedBytes
        self.servedBytes = servedBytes
    }
}

/// A recipient of a broadcast cut off from the swarm: who, by whom, and why.
public struct RelayerReport: Sendable, Equatable {
    /// The transfer: the sender's own with the reporter (receiving), or the one with the offender (sending).
    public var transferID: TransferID
    /// Sending: the sender learnt of it from a report; receiving: this side cut the relayer off.
    public var direction: TransferDirection
    /// The relayer cut off: its display name when connected, else its short device ID.
    public var offender: String
    /// Who reported it: the receiver's display name (sending); nil when this side did (receiving).
    public var reporter: String?
    /// What it did, for a person ("a chunk that does not match the sender's digest").
    public var reason: String
    /// The chunk concerned: file index in the offer and chunk index in the file.
    public var fileIndex: Int
    /// The chunk's index in its file.
    public var chunkIndex: Int

    /// A report with every field given.
    public init(
        transferID: TransferID, direction: TransferDirection, offender: String, reporter: String?, reason: String,
        fileIndex: Int, chunkIndex: Int
    ) {
        self.transferID = transferID
        self.direction = direction
        self.offender = offender
        self.reporter = reporter
        self.reason = reason
        self.fileIndex = fileIndex
        self.chunkIndex = chunkIndex
    }
}
