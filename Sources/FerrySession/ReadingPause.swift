import FerryWire
import Synchronization

/// The links whose reader stops reading, for tests that play a peer that stops reading (a member that stalls,
/// a laptop that sleeps): `Session.pauseReading(of:)`. A link's reader checks it before each read; an empty set costs
/// one uncontended lock per read.
final class ReadingPause: Sendable {
    private let paused = Mutex<Set<LinkID>>([])

    func pause(_ id: LinkID) {
        paused.withLock { _ = $0.insert(id) }
    }

    func resume(_ id: LinkID) {
        paused.withLock { _ = $0.remove(id) }
    }

    /// Returns at once unless `id` is paused; then when the task is cancelled (the link or the session closes).
    func wait(_ id: LinkID) async {
        while paused.withLock({ $0.contains(id) }), !Task.isCancelled {
            try? await Task.sleep(for: .milliseconds(50))
        }
    }
}

extension Session {
    /// Tests only: stops reading the link to `peerID` (the session still writes to it, heartbeats included), so
    /// that what the peer sends piles up in its socket and its queue, as with a peer that stopped reading.
    func pauseReading(of peerID: PeerID) {
        guard let id = peers[peerID]?.connectedLink else { return }
        pausedReaders.pause(id)
    }

    /// Tests only: reads the link to `peerID` again after `pauseReading(of:)`.
    func resumeReading(of peerID: PeerID) {
        guard let id = peers[peerID]?.connectedLink else { return }
        pausedReaders.resume(id)
    }
}
