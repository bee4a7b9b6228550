import FerrySession
import FerryWire

/// The sending side's state: every `send` under way (`OutgoingOperation`, one per offer, with a record per peer),
/// the sends that ended here recently, and the rule that spans them: the transfers to one peer together keep at most
/// `maxInFlightPerPeer` unacknowledged.
///
/// A class held by the engine and touched only on its actor, for the reason `OutgoingOperation` is one. Its methods
/// are the synchronous state changes; the engine runs the pumps and the seeding loop and does the I/O.
final class OutgoingOperations {
    /// Unacknowledged chunk data over all the transfers to one peer, at most (beyond one chunk when nothing is
    /// unacknowledged): each transfer keeps its own window, and several at once to one receiver must not pass what it
    /// queues from one sender, 64 MiB (`IncomingTransfers.maxQueuedBytes`, PROTOCOL.md 11.10 rule 6), or it closes
    /// the link. Three transfers compressed by `auto` (24 MiB windows) to a receiver whose disk is slow would.
    static let maxInFlightPerPeer = 48 << 20

    private var operations: [TransferID: OutgoingOperation] = [:]
    /// Sends that ended here recently, by peer and transfer (`finish`): a reply to the offer that crossed this side's
    /// cancel is dropped instead of closing the link (PROTOCOL.md 11.10 rule 7).
    private var ended = RecentlyEnded<IncomingKey>()

    subscript(id: TransferID) -> OutgoingOperation? {
        get { operations[id] }
        set { operations[id] = newValue }
    }

    /// Every send's ID (a copy: the table may change while the caller goes through them).
    var ids: [TransferID] { Array(operations.keys) }

    /// The sends under way.
    var all: Dictionary<TransferID, OutgoingOperation>.Values { operations.values }

    /// The first send `predicate` takes, with its ID.
    func first(where predicate: (OutgoingOperation) -> Bool) -> (id: TransferID, operation: OutgoingOperation)? {
        operations.first { predicate($0.value) }.map { ($0.key, $0.value) }
    }

    /// Runs `body` on the peer's record in place. The record is taken out of the table while `body` runs, so its
    /// arrays (one entry per file) are never copied on a mutation: with thousands of files a copy per chunk or
    /// acknowledgement would make a transfer quadratic.
    @discardableResult
    func withPeer<T>(_ id: TransferID, _ peerID: PeerID, _ body: (inout OutgoingPeer) throws -> T) rethrows -> T? {
        guard let operation = operations[id], var peer = operation.peers.removeValue(forKey: peerID) else { return nil }
        defer { operations[id]?.peers[peerID] = peer }
        return try body(&peer)
    }

    /// The send `id` is over: its record goes. Returns its peers (their pumps held back for room may go on now).
    func remove(_ id: TransferID) -> [PeerID] {
        operations.removeValue(forKey: id).map { Array($0.peers.keys) } ?? []
    }

    /// The transfer of `id` with `peerID` is over: its record is taken out, and the pair remembered as ended.
    func finish(_ id: TransferID, _ peerID: PeerID) -> OutgoingPeer? {
        guard let peer = operations[id]?.peers.removeValue(forKey: peerID) else { return nil }
        ended.insert(IncomingKey(peer: peerID, transferID: id))
        return peer
    }

    /// Whether the transfer of `id` with `peerID` ended here recently.
    func hasEnded(_ id: TransferID, _ peerID: PeerID) -> Bool {
        ended.contains(IncomingKey(peer: peerID, transferID: id))
    }

    // MARK: The window of all the transfers to one peer

    /// Chunk data unacknowledged to `peerID`, over all the transfers sending to it.
    func inFlight(to peerID: PeerID) -> Int {
        operations.values.reduce(0) { total, operation in
            guard let peer = operation.peers[peerID], peer.machine.phase == .sending else { return total }
            return total + peer.machine.inFlightBytes
        }
    }

    /// Whether `length` more bytes of chunk data to `peerID` keep all its transfers' unacknowledged data within
    /// `maxInFlightPerPeer` (always when none is), given `total` unacknowledged now (`inFlight(to:)`). If not, the
    /// pump of `id` is marked to be woken by news of any transfer to that peer (it may have nothing unacknowledged
    /// itself).
    func hasPeerRoom(for length: Int, total: Int, _ id: TransferID, _ peerID: PeerID) -> Bool {
        if total == 0 || total + length <= Self.maxInFlightPerPeer { return true }
        operations[id]?.peers[peerID]?.waitsForPeerRoom = true
        return false
    }

    /// The sends whose pump to `peerID` waits for room to it, no longer marked: the caller wakes them.
    func takePeerRoomWaiters(_ peerID: PeerID) -> [TransferID] {
        var waiting: [TransferID] = []
        for (id, operation) in operations where operation.peers[peerID]?.waitsForPeerRoom == true {
            operation.peers[peerID]?.waitsForPeerRoom = false
            waiting.append(id)
        }
        return waiting
    }
}
