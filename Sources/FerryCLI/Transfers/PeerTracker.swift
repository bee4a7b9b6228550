import FerrySession
import FerryWire

/// The peers a transfer command has seen, kept current from the session's events, with a way to wait for change.
///
/// A session has one event stream and several parts of a command care about peers (resolving `--to`, the
/// picker, `--all`, `watch` reconnecting); the tracker is the one reader of the stream and the others ask it.
/// `waitForChange(after:until:)` returns when a newer generation exists or the deadline passes, so no caller
/// polls or sleeps to find out.
actor PeerTracker {
    /// Peers by ID with their latest state.
    private(set) var peers: [PeerID: PeerInfo] = [:]
    /// Display names of every peer seen, in order of discovery, for "peers seen: ..." messages.
    private(set) var namesSeen: [String] = []
    /// Bumped on every change.
    private(set) var generation = 0
    /// Whether the event stream ended (the session closed): nothing will change any more.
    private(set) var isFinished = false
    private var waiters: [Int: CheckedContinuation<Void, Never>] = [:]
    private var nextWaiter = 0
    /// Waiters released before they were stored (a cancellation or deadline that raced the wait).
    private var released: Set<Int> = []
    /// Waits in progress (stored or about to be).
    private var pending: Set<Int> = []
    private let onEvent: @Sendable (SessionEvent) -> Void

    /// `onEvent` sees every session event first (for printing).
    init(onEvent: @escaping @Sendable (SessionEvent) -> Void = { _ in }) {
        self.onEvent = onEvent
    }

    /// Reads `session.events` until the stream ends or the calling task is cancelled.
    func follow(_ session: Session) async {
        for await event in session.events {
            onEvent(event)
            if case .peerStateChanged(let peer, let state, _) = event {
                record(peer.with(state: state))
            }
        }
        isFinished = true
        generation += 1
        for waiter in waiters.values {
            waiter.resume()
        }
        waiters.removeAll()
    }

    /// Takes `peer` (with its new state) as the latest news of it; `follow(_:)` calls it for each state change.
    func record(_ peer: PeerInfo) {
        if peers[peer.peerID] == nil, !peer.isConnectedBySwarmLink, !namesSeen.contains(peer.displayName) {
            namesSeen.append(peer.displayName)
        }
        peers[peer.peerID] = peer
        generation += 1
        for waiter in waiters.values {
            waiter.resume()
        }
        waiters.removeAll()
    }

    /// Peers that can be asked to connect or are connected: discovered (or manual) and not gone. A peer connected
    /// only by a swarm link is no target (`--to`, `--all`, the picker, watch): the engine's plumbing, not a peer.
    var reachable: [PeerInfo] {
        peers.values.filter { [.available, .connecting, .connected].contains($0.state) && !$0.isConnectedBySwarmLink }
            .sorted { $0.displayName == $1.displayName ? $0.peerID < $1.peerID : $0.displayName < $1.displayName }
    }

    /// Returns when the generation is past `seen`, when `deadline` passes (nil: never), or on cancellation.
    func waitForChange(after seen: Int, until deadline: ContinuousClock.Instant?) async {
        guard generation == seen, !isFinished, !Task.isCancelled else {
            return
        }
        let id = nextWaiter
        nextWaiter += 1
        pending.insert(id)
        defer {
            pending.remove(id)
            released.remove(id)
        }
        let timer = deadline.map { deadline in
            Task { [weak self] in
                guard (try? await Task.sleep(until: deadline, clock: .continuous)) != nil else { return }
                await self?.release(id)
            }
        }
        await withTaskCancellationHandler {
            await withCheckedContinuation { continuation in
                if released.remove(id) != nil {
                    continuation.resume()
                } else {
                    waiters[id] = continuation
                }
            }
        } onCancel: {
            Task { await self.release(id) }
        }
        timer?.cancel()
    }

    private func release(_ id: Int) {
        if let waiter = waiters.removeValue(forKey: id) {
            waiter.resume()
        } else if pending.contains(id) {
            released.insert(id)
        }
    }
}
