import FerrySecurity
import FerryStateMachines
import FerrySystem
import FerryWire
import Foundation

/// How a link ends: closed links kept draining for the peer to read our last frames (`keepClosing`, `tick`), what
/// their readers' and writers' ends settle, and the session's periodic tick.
extension Session {
    /// Tests: closing links keep their deadlines (`closingDeadlinesHeld`).
    func holdClosingDeadlines() {
        closingDeadlinesHeld = true
    }

    /// Tests: whether the closed link `id` still drains (its stream open, in `closingStreams`).
    func isDraining(_ id: LinkID) -> Bool {
        closingStreams[id] != nil
    }

    /// Keeps the stream of the closed link `id` open to flush our last frames and drain the peer's
    /// (`closingStreams`). Links that were never admitted (strangers, refused or failed requests) keep at most
    /// `maxPendingLinks` such drains; beyond, the oldest is closed at once. Else handshakes each followed by a
    /// protocol error held a descriptor and TLS state for up to `closeLimit` each, past every pending-link bound (an
    /// audit held 786 descriptors open from one address); an admitted peer's link always drains.
    func keepClosing(_ id: LinkID, _ entry: ClosingStream) {
        closingStreams[id] = entry
        guard !entry.admitted else { return }
        let draining = closingStreams.filter { !$0.value.admitted }
        guard draining.count > configuration.maxPendingLinks,
            let oldest = draining.min(by: { $0.value.limit < $1.value.limit })?.key
        else { return }
        closingStreams.removeValue(forKey: oldest)?.stream.close()
        statistics.closingLinksCut += 1
    }

    func linkClosed(_ id: LinkID, reason: LinkStateMachine.CloseReason) {
        guard let link = links.removeValue(forKey: id) else { return }
        log("\(id) \(link.remoteAddress) closed: \(reason.text)")
        link.writer.finish()
        transferBacklog.forget(id)  // a closed link's reader only drains: it never waits for the engine
        if link.stream.peer == nil {
            link.stream.close()  // never authenticated: nothing of ours to deliver, free the descriptor now
        } else {
            let now = clock.now
            let admitted = link.peerID.map { peers[$0]?.connection == .connected(id) } ?? false
            keepClosing(
                id,
                ClosingStream(
                    stream: link.stream, deadline: now + Self.closeGrace, limit: now + Self.closeLimit,
                    admitted: admitted))
        }
        let peerName = link.peerID.flatMap { peers[$0]?.displayName } ?? link.remoteAddress.description
        if case .probeFinished = reason, let peerID = link.peerID, var peer = peers[peerID] {
            peer.isManual = true
            peers[peerID] = peer
            link.settleWaiters(.success(peer.info))
            reportState(of: peerID)
            return
        }
        let error = Self.error(for: reason, peer: peerName)
        guard let peerID = link.peerID ?? link.expectedPeer, var peer = peers[peerID] else {
            link.settleWaiters(.failure(error))
            return
        }
        // Both asked at once and the other link won: the caller of `connect` is connected all the same.
        link.settleWaiters(peer.connectedLink.map { $0 != id } == true ? .success(peer.info) : .failure(error))
        // `accept` and `deny` clear the pending request first: a request still pending here ended unanswered.
        let requestEnded = peer.pendingRequest == id
        if requestEnded { peer.pendingRequest = nil }
        defer { if requestEnded { emit(.requestEnded(peer.info)) } }
        switch peer.connection {
        case .connected(id):
            peer.connection = .none
            peer.datagramAddress = nil
            peer.datagrams = nil
            peer.reportedState = .disconnected
            peers[peerID] = peer
            emit(.peerStateChanged(peer.info.with(state: .disconnected), .disconnected, reason: error))
            transferSink.yield(.peerDisconnected(peerID, reason: error.description))
            reportState(of: peerID)
            if configuration.mode != .client, discoverySocket != nil, !isClosed { announce(query: false) }
        case .connecting(let pending) where pending == id || (pending == nil && !link.isAcceptor):
            peer.connection = .none
            peers[peerID] = peer
            reportState(of: peerID, reason: error)
        default:
            peers[peerID] = peer
        }
        forgetIfTransient(peerID)
    }

    static func error(for reason: LinkStateMachine.CloseReason, peer: String) -> SessionError {
        switch reason {
        case .denied(let deny): return .denied(peer: peer, reason: deny.reason, detail: deny.detail)
        case .deniedLocally(let deny) where deny.reason == .sessionMismatch:
            return .connectFailed(peer: peer, underlying: "it belongs to another session")
        case .protocolError(let detail): return .protocolViolation(peer: peer, detail: detail)
        case .securityFailure(let detail): return .authenticationFailed(peer: peer, detail: detail)
        case .timedOut(.connectionRequest): return .connectTimedOut(peer: peer, after: .zero)
        case .goodbye(let goodbye) where goodbye.reason == .notAccepted:
            // The initiator's person said no after the link was made (a chat): to the application, as a deny.
            return .denied(peer: peer, reason: .deniedByUser, detail: goodbye.detail)
        default: return .disconnected(peer: peer, reason: reason.text)
        }
    }

    /// Resumes the callers of `connect` or `probe` waiting on a link that is still in the table.
    func settleWaiters(of id: LinkID, _ result: Result<PeerInfo, SessionError>) {
        let waiters = links[id]?.waiters ?? []
        links[id]?.waiters = []
        waiters.forEach { $0.resume(with: result) }
    }

    /// The reader saw the peer close (or an error): a closed link whose writer is done too is closed now.
    func readerFinished(_ id: LinkID) {
        readerTasks.removeValue(forKey: id)
        transferBacklog.forget(id)
        if writerTasks[id] == nil { closingStreams.removeValue(forKey: id)?.stream.close() }
    }

    /// A peer known only through a link (not discovered, not manual) is forgotten when it has no link left,
    /// so that hellos with ever new peer IDs cannot grow the peer table.
    func forgetIfTransient(_ peerID: PeerID) {
        guard let peer = peers[peerID], peer.connection == .none, peer.pendingRequest == nil, !peer.isDiscovered,
            !peer.isManual, !links.values.contains(where: { $0.peerID == peerID })
        else { return }
        peers.removeValue(forKey: peerID)
    }

    /// A writer drained its last bytes and half-closed its stream (or a write failed): a closed link whose reader
    /// is done too is closed now.
    func writerFinished(_ id: LinkID) {
        writerTasks.removeValue(forKey: id)
        if readerTasks[id] == nil {
            closingStreams.removeValue(forKey: id)?.stream.close()
        } else if var entry = closingStreams[id] {
            entry.deadline = min(clock.now + Self.closeGrace, entry.limit)  // the peer's time to read our last frames
            closingStreams[id] = entry
        }
    }

    func disconnectLink(_ id: LinkID, reason: GoodbyeReason) {
        update(id) { machine, now in machine.disconnect(reason, now: now) }
    }

    /// Ticks every link, discovery and the manual addresses.
    func tick() {
        tick(now: clock.now)
    }

    /// `tick()` at `now` (tests: a later instant, to pass a deadline without waiting for it).
    func tick(now: ContinuousClock.Instant) {
        guard !isClosed else { return }
        for id in links.keys.sorted() {
            update(id) { machine, now in machine.tick(now: now) }
            // A peer that stops reading while we have bytes for it is as gone as a silent one. Until its TLS
            // handshake is done the hello waits in the writer by design (the handshake deadline governs then), so a
            // stall counts from the handshake's end at the earliest.
            if let link = links[id], let established = link.stream.peer?.established,
                let queued = link.writer.stalledDuration(now: now),
                case let stalled = min(queued, now - established), stalled > configuration.disconnectTimeout
            {
                log("\(id) \(link.remoteAddress): nothing could be written for \(stalled.secondsText)")
                link.stream.close()
                update(id) { machine, _ in machine.streamEnded() }
            }
        }
        // The grace runs once our last frames are written (`writerFinished`): a deny still queued behind a lagging
        // writer is not cut by it, only by the limit.
        for (id, entry) in closingStreams
        where !closingDeadlinesHeld && (now >= entry.limit || (writerTasks[id] == nil && now >= entry.deadline)) {
            entry.stream.close()
            closingStreams.removeValue(forKey: id)
        }
        if discoverySocket != nil {
            handleDiscovery(discoveryCache.tick(now: now, jitter: Double.random(in: 0..<1)))
        }
        probeManualAddresses(now: now)
    }
}
