import FerryWire
import Synchronization

/// Transfer frames read from a peer and handed to `Session.transferEvents` that the transfer engine has not taken
/// yet, per peer: the bound between a link's reader and the engine (docs/SECURITY.md promise 4).
///
/// Why: a link's reader decodes frames as fast as the peer sends them and the engine takes them one at a time. While
/// the engine is busy (a frame that costs it time, a stalled disk it waits behind), everything the peer sends would
/// pile up in the channel, outside every other bound: the 64 MiB a sender may queue for writing counts only frames
/// the engine took. So the reader of a link whose peer has more than `limit` bytes waiting stops reading until the
/// engine takes enough of them; the peer's sends then wait in TCP, as for any receiver that reads slowly. An honest
/// sender never gets there: it keeps at most its window (48 MiB over all its transfers) unacknowledged, and the
/// engine acknowledges only what it took.
///
/// Counted when the session yields a frame (`add`) and when the channel's consumer takes it (`take`, the channel's
/// `onTake`), so a consumer cannot forget to give the room back.
final class TransferBacklog: Sendable {
    fileprivate struct State {
        var bytes: [PeerID: Int] = [:]
        /// The peer each link's frames count for (a link carries transfer frames only once its peer is known).
        var peerOfLink: [LinkID: PeerID] = [:]
        /// Readers waiting for their peer's backlog to fall to the limit.
        var waiters: [LinkID: UnsafeContinuation<Void, Never>] = [:]
        /// Links whose reader was cancelled: it never waits again.
        var cancelled: Set<LinkID> = []
        var largest = 0
        var pauses = 0
    }

    /// Bytes (frame header and payload) one peer may have waiting before its link's reader stops.
    let limit: Int
    private let state = Mutex(State())

    init(limit: Int) {
        precondition(limit > 0)
        self.limit = limit
    }

    /// The most bytes one peer ever had waiting (tests prove the bound with it).
    var largest: Int { state.withLock { $0.largest } }
    /// How many times a reader stopped for its peer's backlog.
    var pauses: Int { state.withLock { $0.pauses } }
    /// Bytes waiting from `peerID` now.
    func bytes(of peerID: PeerID) -> Int { state.withLock { $0.bytes[peerID] ?? 0 } }

    /// A frame of `bytes` from `peerID`, read on `link`, was handed to the engine.
    func add(_ bytes: Int, from peerID: PeerID, on link: LinkID) {
        state.withLock { state in
            state.peerOfLink[link] = peerID
            let total = (state.bytes[peerID] ?? 0) + bytes
            state.bytes[peerID] = total
            state.largest = max(state.largest, total)
        }
    }

    /// The engine took a frame of `bytes` from `peerID`: readers of its links go on once it is at the limit or below.
    func take(_ bytes: Int, from peerID: PeerID) {
        let resumed = state.withLock { state -> [UnsafeContinuation<Void, Never>] in
            let total = max(0, (state.bytes[peerID] ?? 0) - bytes)
            state.bytes[peerID] = total == 0 ? nil : total
            guard total <= limit else { return [] }
            let links = state.waiters.keys.filter { state.peerOfLink[$0] == peerID }
            return links.compactMap { state.waiters.removeValue(forKey: $0) }
        }
        resumed.forEach { $0.resume() }
    }

    /// Returns at once while `link`'s peer has at most `limit` bytes waiting; otherwise when it has (`take`), the link
    /// is forgotten, or the task is cancelled (the link or the session closes).
    func waitForRoom(_ link: LinkID) async {
        guard state.withLock({ $0.isOverLimit(link, limit) }) else { return }
        await withTaskCancellationHandler {
            await withUnsafeContinuation { (continuation: UnsafeContinuation<Void, Never>) in
                let wait = state.withLock { state -> Bool in
                    guard state.isOverLimit(link, limit), state.waiters[link] == nil, !state.cancelled.contains(link)
                    else { return false }
                    state.waiters[link] = continuation
                    state.pauses += 1
                    return true
                }
                if !wait { continuation.resume() }
            }
        } onCancel: {
            state.withLock { state in
                state.cancelled.insert(link)
                return state.waiters.removeValue(forKey: link)
            }?.resume()
        }
    }

    /// `link` ended: its reader, if waiting, goes on (to see the end). What its peer has waiting still counts until
    /// the engine takes it.
    func forget(_ link: LinkID) {
        state.withLock { state -> UnsafeContinuation<Void, Never>? in
            state.peerOfLink.removeValue(forKey: link)
            state.cancelled.remove(link)
            return state.waiters.removeValue(forKey: link)
        }?.resume()
    }
}

extension TransferBacklog.State {
    fileprivate func isOverLimit(_ link: LinkID, _ limit: Int) -> Bool {
        guard let peer = peerOfLink[link] else { return false }
        return (bytes[peer] ?? 0) > limit
    }
}
