import FerrySession
import FerryWire

/// The receive path's state: every transfer this engine receives, and the rules that span them. One for all peer
/// kinds: a ferry sender's frames reach it through the engine's `handle(_:)`, and an adapter for another protocol
/// (an upload over HTTP, a wormhole transfer) would feed the same steps (docs/ARCHITECTURE.md, "The transfer engine").
///
/// It owns, by `IncomingKey` (sender and transfer ID):
/// - each transfer's record (`IncomingTransfer`: its offer, machine, files, staged handles, progress), taken out of
///   the table while a change runs (`with`), so that its per-file arrays are never copied;
/// - the offers waiting for the application's answer (`asks`);
/// - the transfers that ended here recently: their frames still in flight are dropped, not a protocol violation;
/// - the raw bytes each sender has queued to be written, over all its transfers: at most `maxQueuedBytes`, whatever
///   the sender does with its window (`admit`, `written`);
/// - the chunk acknowledgements held while a batch of write completions is carried out, sent in one queue entry
///   before any other frame to their peer (`hold`, `takeHeldAcks`).
///
/// A class held by the engine and touched only on its actor, for the reason `OutgoingOperation` is one. Its methods
/// are the synchronous state changes; the engine does the I/O (staging, writes, verification, publishing) and sends
/// the frames.
final class IncomingTransfers {
    /// A sender keeps at most its window unacknowledged (8 MiB in ferry); past this many raw bytes of one sender
    /// waiting to be written (all its transfers together), it is not keeping to any window.
    static let maxQueuedBytes = 64 << 20

    /// How long a stopped transfer's outcome waits for the writes queued before the stop (a stalled disk holds them
    /// forever); past it the outcome says what was written by then, a lower bound of what its staged files keep.
    static let maxEndingWait: Duration = .seconds(5)

    private let transfers = RecordTable<IncomingKey, IncomingTransfer>()
    /// Who waits for every stopped transfer's outcome (`TransferEngine.stop`).
    var endingWaiters: [CheckedContinuation<Void, Never>] = []
    /// Offers whose staged files a stopped transfer still holds, by that transfer: accepted once it ended.
    var parkedOffers: [IncomingKey: [IncomingKey]] = [:]
    /// Offers waiting under `OfferPolicy.ask`, with the timer of each.
    var asks: [IncomingKey: PendingAsk] = [:]
    private var queuedBytes: [PeerID: Int] = [:]
    private var heldAcks: [PeerID: [[UInt8]]] = [:]
    /// A batch of write completions is being carried out: its acknowledgements are held (`hold`).
    var isHoldingAcks = false
    /// What each sender may still have hashed to find files held already (PROTOCOL.md 11.10 rule 10); made with the
    /// engine's configuration at the first offer that needs it.
    var hashBudget: AlreadyThereBudget?
    /// Tests: where the hashing of held files waits (`TransferEngine.holdHeldHashing`).
    var hashGate: AlreadyThereGate?
    private var generations: UInt64 = 0
    /// Peers of other protocols attached by their adapters (`TransferEngine.attachForeignPeer`), by their IDs from
    /// the foreign range, and who waits for room under `maxQueuedBytes` for each (`ForeignPeer.write`).
    var foreignPeers: [PeerID: ForeignPeerRecord] = [:]
    var roomWaiters: [PeerID: [CheckedContinuation<Void, Never>]] = [:]
    /// Foreign peers' offers waiting for their reply (`ForeignPeer.offer`).
    var offerWaiters: [IncomingKey: CheckedContinuation<OfferReply?, Never>] = [:]

    /// A number no other offer received by this engine has had (`IncomingTransfer.generation`).
    func nextGeneration() -> UInt64 {
        generations += 1
        return generations
    }

    /// The record of transfer `key`; set to nil to drop it without remembering it ended (an offer never accepted).
    subscript(key: IncomingKey) -> IncomingTransfer? {
        get { transfers[key] }
        _modify { yield &transfers[key] }
    }

    /// No transfer is here (answered, ended or withdrawn).
    var isEmpty: Bool { transfers.all.isEmpty }

    /// Every transfer's key (a copy: the table may change while the caller goes through them).
    var keys: [IncomingKey] { Array(transfers.all.keys) }

    /// Whether a stopped transfer still waits for its outcome (for the writes queued before its stop).
    var hasEnding: Bool { transfers.all.values.contains { $0.endsAs != nil } }

    /// Runs `body` on a transfer's record in place (taken out of the table meanwhile, so its per-file arrays are not
    /// copied on every mutation); nil when there is no such transfer.
    @discardableResult
    func with<T>(_ key: IncomingKey, _ body: (inout IncomingTransfer) throws -> T) rethrows -> T? {
        try transfers.with(key, body)
    }

    /// The transfer is over here: its record goes, and its key is remembered as ended.
    func end(_ key: IncomingKey) -> IncomingTransfer? {
        let transfer = transfers.end(key)
        // A foreign peer's bytes held for its files' next chunks are counted as queued (`ForeignPeer.write`).
        if key.peer.isForeign, let held = transfer?.files.reduce(0, { $0 + $1.partialChunk.count }) {
            written(held, by: key.peer)
        }
        return transfer
    }

    /// Whether `key` ended here recently (its frames in flight are dropped).
    func hasEnded(_ key: IncomingKey) -> Bool { transfers.hasEnded(key) }

    // MARK: What each sender has queued to be written

    /// Raw bytes of `peerID`'s chunks queued to be written and not written yet (a foreign peer's: with the bytes
    /// held for its files' next chunks).
    func queued(by peerID: PeerID) -> Int { queuedBytes[peerID, default: 0] }

    /// Whether `count` more raw bytes from `peerID` stay within `maxQueuedBytes`.
    func admits(_ count: Int, from peerID: PeerID) -> Bool { queued(by: peerID) + count <= Self.maxQueuedBytes }

    /// Counts `count` raw bytes of `peerID` queued to be written; returns its total now.
    func admit(_ count: Int, from peerID: PeerID) -> Int {
        let total = queued(by: peerID) + count
        queuedBytes[peerID] = total
        return total
    }

    /// `count` raw bytes of `peerID` were written (or failed to be).
    func written(_ count: Int, by peerID: PeerID) {
        guard count > 0 else { return }
        let left = queued(by: peerID) - count
        queuedBytes[peerID] = left > 0 ? left : nil
        if peerID.isForeign, let waiters = roomWaiters.removeValue(forKey: peerID) {
            for waiter in waiters { waiter.resume() }
        }
    }

    // MARK: Acknowledgements held for a batch

    /// Holds an encoded `chunkAck` for `peerID` until the batch ends or another frame goes to it.
    func hold(_ frame: [UInt8], for peerID: PeerID) { heldAcks[peerID, default: []].append(frame) }

    /// The acknowledgements held for `peerID`, taken (empty when none).
    func takeHeldAcks(for peerID: PeerID) -> [[UInt8]] { heldAcks.removeValue(forKey: peerID) ?? [] }

    /// Puts back acknowledgements taken with `takeHeldAcks` that could not be sent, ahead of any held since.
    func putBack(_ frames: [[UInt8]], for peerID: PeerID) {
        guard !frames.isEmpty else { return }
        heldAcks[peerID, default: []].insert(contentsOf: frames, at: 0)
    }

    /// The peers with acknowledgements held.
    var peersWithHeldAcks: [PeerID] { Array(heldAcks.keys) }
}
