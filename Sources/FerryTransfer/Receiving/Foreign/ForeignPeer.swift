import FerrySession
import FerryWire

/// Who a peer of another protocol is, as its adapter vouches for it: the receive path asks nothing else.
public struct ForeignPeerIdentity: Sendable, Equatable {
    /// The SHA-256 of the peer's certificate (LocalSend's fingerprint is the same kind of hash as a ferry device ID),
    /// never a name or field the peer wrote itself.
    public var deviceID: DeviceID
    /// The name it announces (escape it before printing it: a peer chooses it).
    public var displayName: String
    /// Whether its device ID is pinned in the trust store (`--accept trusted` takes offers from it unasked).
    public var isTrusted: Bool
    /// The protocol it speaks, e.g. "localsend": `PeerInfo.protocolName` of its events.
    public var protocolName: String

    /// An identity with the given fields.
    public init(deviceID: DeviceID, displayName: String, isTrusted: Bool, protocolName: String) {
        self.deviceID = deviceID
        self.displayName = displayName
        self.isTrusted = isTrusted
        self.protocolName = protocolName
    }
}

/// One file a foreign peer offers: its path (checked by `NameValidator` as a ferry sender's is), size, time and
/// media type, and the SHA-256 of its bytes when the protocol gives one (nil: it is checked by its size alone).
public struct ForeignFile: Sendable, Equatable {
    /// The name the sender gave, folders separated by `/`, exactly as sent (validated when offered, never here).
    public var path: String
    /// Its size in bytes as offered: the file fails when its end comes before that many, or a piece goes past it.
    public var size: UInt64
    /// Its modification time as the sender gave it (the epoch when unknown): set on the published file.
    public var modificationTime: FileTime
    /// The sender's media type (`image/jpeg`), "" when unknown; shown and reported, never trusted.
    public var mediaType: String
    /// 32 bytes, or nil when the sender gives no digest (`FileVerification.size`).
    public var sha256: [UInt8]?

    /// A file with the given fields.
    public init(
        path: String, size: UInt64, modificationTime: FileTime = FileTime(seconds: 0, nanoseconds: 0),
        mediaType: String = "", sha256: [UInt8]?
    ) {
        self.path = path
        self.size = size
        self.modificationTime = modificationTime
        self.mediaType = mediaType
        self.sha256 = sha256
    }
}

/// Why the receive path did not take a piece or a file's end from a foreign peer; nothing of it was stored.
public enum ForeignPieceError: Error, Equatable, Sendable, CustomStringConvertible {
    /// No accepted transfer or file of that index: not offered, still asked, denied, or another peer's.
    case notAccepted
    /// The transfer or the file ended (cancelled, failed, published, detached) before or while it was taken.
    case ended
    /// More bytes than the file's offered size.
    case tooLong
    /// The file's end before every byte of it came: the file failed.
    case incomplete
    /// A second piece of a file while one is still being taken (pieces of one file come one at a time, in order).
    case overlapping

    /// What went wrong, for a log line or an HTTP answer's message.
    public var description: String {
        switch self {
        case .notAccepted: "no accepted transfer takes this file"
        case .ended: "the transfer or file ended"
        case .tooLong: "more bytes than the file's size"
        case .incomplete: "the file ended before all its bytes came"
        case .overlapping: "a piece of a file while another piece of it is being taken"
        }
    }
}

/// An adapter's handle on a peer of another protocol attached to the transfer engine
/// (`TransferEngine.attachForeignPeer`): the steps of the receive path, and the answers a ferry sender would get as
/// frames (`answers`). See docs/ARCHITECTURE.md, "How another protocol uses the receive path".
public struct ForeignPeer: Sendable {
    /// Its peer ID in this engine, from the range no ferry peer has (`PeerID.isForeign`).
    public let peerID: PeerID
    /// The peer as every event of its transfers shows it.
    public let info: PeerInfo
    /// What the receive path answers after the offer's reply (which `offer` returns), in the order a ferry link
    /// would carry it: `fileResult`, `cancel` (no `chunkAck`: `write` returning is the adapter's flow control). Ends
    /// when the peer is detached (by `detach`, a broken rule, or the engine stopping). At most one `fileResult` per
    /// offered file and one `cancel` per transfer, so it stays small even when nobody reads it.
    public let answers: AsyncStream<TransferMessage>
    let engine: TransferEngine

    /// Offers `files` as one transfer and waits for its answer (consent: the offer policy, an `offerReceived` event
    /// and `respond`, space): the transfer's ID and the `offerReply` a ferry sender would get (not repeated on
    /// `answers`), nil when the offer went away unanswered (the peer detached or cancelled it, the engine stopped).
    /// A denied offer stores nothing. Cancelling the calling task before the answer withdraws the offer (an ask
    /// being shown is withdrawn, nothing is stored) and returns nil.
    public func offer(_ files: [ForeignFile]) async -> (transferID: TransferID, reply: OfferReply?) {
        await engine.foreignOffer(files, from: peerID)
    }

    /// Takes the next `piece` of file `file`'s bytes (any length; pieces of one file one at a time, in order). Waits
    /// while the peer's bytes queued to be written are at `maxQueuedBytes`, so the caller reads its next piece only
    /// as fast as the disk takes them. Throws, storing nothing of the piece, when no accepted transfer takes it.
    public func write(_ piece: ArraySlice<UInt8>, file: Int, of transferID: TransferID)
        async throws(ForeignPieceError)
    {
        try await engine.foreignPiece(piece, file: file, of: transferID, from: peerID)
    }

    /// Every byte of `file` came: it is verified (by its SHA-256 or its size) and published; its `fileResult` comes
    /// on `answers`. Throws `incomplete` (and the file fails) when bytes are missing, `ended` when the file was
    /// ended or failed already (a second end changes nothing).
    public func endFile(_ file: Int, of transferID: TransferID) async throws(ForeignPieceError) {
        try await engine.foreignFileEnd(file, of: transferID, from: peerID)
    }

    /// The peer cannot give `file` whole (its upload broke mid-body): the file fails alone (its result's and
    /// outcome's detail is `detail`), its staged data is removed, the transfer's other files go on. Call it once no
    /// `write` of the file is under way; nothing happens when the file ended already.
    public func failFile(_ file: Int, of transferID: TransferID, detail: String) async {
        await engine.foreignFileFailed(file, of: transferID, from: peerID, detail: detail)
    }

    /// The peer cancelled the transfer: verified files are still published, the rest is removed.
    public func cancel(_ transferID: TransferID, reason: CancelReason, detail: String = "") async {
        await engine.cancelReceived(
            TransferCancel(transferID: transferID, reason: reason, detail: detail), from: peerID)
    }

    /// The peer is gone: its transfers end as over a lost ferry link (nothing more is published than was
    /// verified; staged data is removed) and `answers` ends.
    public func detach(reason: String) async {
        await engine.detachForeignPeer(peerID, reason: reason)
    }
}

/// A foreign peer's entry in the engine (`IncomingTransfers.foreignPeers`).
struct ForeignPeerRecord {
    var info: PeerInfo
    var answers: AsyncStream<TransferMessage>.Continuation
    /// `detach` began: no offer or piece is taken any more (`TransferEngine.isAttached`).
    var isDetaching = false
}
