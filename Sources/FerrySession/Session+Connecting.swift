import FerrySecurity
import FerryStateMachines
import FerrySystem
import FerryWire

extension Session {
    /// GameKit's `connectToPeer:withTimeout:`: asks the peer to connect and returns when it accepted.
    ///
    /// Throws `SessionError.denied` with the peer's reason, `.connectTimedOut`, or `.connectFailed`; cancel the
    /// calling task to cancel the request (GameKit's `cancelConnectToPeer:`).
    @discardableResult
    public func connect(to peerID: PeerID, timeout: Duration = .seconds(30)) async throws -> PeerInfo {
        guard !isClosed else { throw SessionError.sessionClosed }
        guard var peer = peers[peerID] else { throw SessionError.unknownPeer(peerID) }
        if peer.connectedLink != nil { return peer.info }
        if case .connecting = peer.connection { throw SessionError.alreadyConnecting(peer.displayName) }
        guard let address = peer.address else { throw SessionError.peerHasNoAddress(peer.displayName) }
        peer.connection = .connecting(nil)
        peers[peerID] = peer
        reportState(of: peerID)
        return try await openLink(to: address, purpose: .connect(timeout: timeout), expectedPeer: peerID,
                                  name: peer.displayName, timeout: timeout)
    }

    /// Connects to a manual address (`--peer HOST:PORT`), whoever answers there.
    @discardableResult
    public func connect(toAddress address: SocketAddress, timeout: Duration = .seconds(30)) async throws -> PeerInfo {
        guard !isClosed else { throw SessionError.sessionClosed }
        return try await openLink(to: address, purpose: .connect(timeout: timeout), expectedPeer: nil,
                                  name: address.description, timeout: timeout)
    }

    /// Learns who answers at a manual address without asking to connect; the peer then counts as Available.
    @discardableResult
    public func probe(_ address: SocketAddress, timeout: Duration = .seconds(5)) async throws -> PeerInfo {
        guard !isClosed else { throw SessionError.sessionClosed }
        return try await openLink(to: address, purpose: .probe, expectedPeer: nil, name: address.description,
                                  timeout: timeout)
    }

    /// Opens a link and waits for its outcome. `member`: a swarm link pinned to that device (`Session+Swarm`).
    func openLink(
        to address: SocketAddress, purpose: LinkStateMachine.Purpose, expectedPeer: PeerID?, name: String,
        timeout: Duration, member: DeviceID? = nil
    ) async throws -> PeerInfo {
        let started = clock.now
        let stream: TCPConnection
        do {
            stream = try await reactor.connectTCP(to: address, timeout: timeout)
        } catch {
            let failure: SessionError
            if let reactorError = error as? ReactorError, reactorError == .timedOut {
                failure = .connectTimedOut(peer: name, after: timeout)
            } else if error is CancellationError {
                if let expectedPeer { connectionAbandoned(expectedPeer, reason: nil) }
                throw error
            } else {
                failure = .connectFailed(peer: name, underlying: SessionError.reaching(error))
            }
            if let expectedPeer { connectionAbandoned(expectedPeer, reason: failure) }
            throw failure
        }
        guard !isClosed else {
            stream.close()
            throw SessionError.sessionClosed
        }
        var role = LinkStateMachine.Role.initiator(purpose)
        if case .connect = purpose {
            let remaining = max(timeout - (clock.now - started), .milliseconds(1))
            role = .initiator(.connect(timeout: remaining))
        }
        let secure: TLSStream
        do {
            secure = try TLSStream(over: stream, context: tlsContext, role: .client)
        } catch {
            stream.close()
            let failure = SessionError.connectFailed(peer: name, underlying: "\(error)")
            if let expectedPeer { connectionAbandoned(expectedPeer, reason: failure) }
            throw failure
        }
        let id = adopt(secure, role: role, expectedPeer: expectedPeer)
        if let member {
            links[id]?.pinnedDevice = member
            links[id]?.isSwarm = true
        }
        if let expectedPeer, var peer = peers[expectedPeer], peer.connectedLink == nil {
            peer.connection = .connecting(id)
            peers[expectedPeer] = peer
        }
        return try await withTaskCancellationHandler {
            try await withCheckedThrowingContinuation { (continuation: CheckedContinuation<PeerInfo, any Error>) in
                guard var link = links[id] else {
                    continuation.resume(throwing: SessionError.connectFailed(peer: name, underlying: "the link closed"))
                    return
                }
                link.waiters.append(continuation)
                links[id] = link
            }
        } onCancel: {
            Task { await self.cancelLink(id) }
        }
    }

    /// A connect attempt ended before a link existed.
    private func connectionAbandoned(_ peerID: PeerID, reason: SessionError?) {
        guard var peer = peers[peerID], case .connecting(nil) = peer.connection else { return }
        peer.connection = .none
        peers[peerID] = peer
        reportState(of: peerID, reason: reason)
    }

    func cancelLink(_ id: LinkID) {
        guard links[id] != nil else { return }
        settleWaiters(of: id, .failure(.connectFailed(peer: links[id]?.remoteAddress.description ?? "\(id)",
                                                      underlying: "cancelled")))
        update(id) { machine, now in machine.disconnect(.disconnected, detail: "cancelled", now: now) }
    }

    /// GameKit's `acceptConnectionFromPeer:`. Limits still apply: past `maxPeers` the request is denied as full.
    public func accept(_ peerID: PeerID) throws {
        guard let id = peers[peerID]?.pendingRequest, links[id] != nil else {
            throw SessionError.notConnected("\(peers[peerID]?.displayName ?? "\(peerID)") (no pending request)")
        }
        peers[peerID]?.pendingRequest = nil
        switch admission(for: peerID, policy: .all) {
        case .accept, .ask:
            update(id) { machine, now in machine.accept(now: now) }
        case .deny(let deny):
            update(id) { machine, now in machine.deny(deny, now: now) }
        }
    }

    /// GameKit's `denyConnectionFromPeer:`.
    public func deny(_ peerID: PeerID, reason: DenyReason = .deniedByUser, detail: String = "") {
        guard let id = peers[peerID]?.pendingRequest else { return }
        peers[peerID]?.pendingRequest = nil
        let deny = Deny(reason: reason, detail: Limits.clippedDetail(detail))
        update(id) { machine, now in machine.deny(deny, now: now) }
    }

    /// GameKit's `disconnectPeerFromAllPeers:`.
    public func disconnect(_ peerID: PeerID) {
        guard let id = peers[peerID]?.connectedLink ?? connectingLink(of: peerID) else { return }
        disconnectLink(id, reason: .disconnected)
    }

    /// Ends the link to a peer that broke a protocol carried on it (the transfer protocol): the goodbye says
    /// `protocolError` and how (PROTOCOL 3.5, 11.10), so that the peer can tell it from a person disconnecting.
    public func disconnect(_ peerID: PeerID, violation detail: String) {
        guard let id = peers[peerID]?.connectedLink ?? connectingLink(of: peerID) else { return }
        update(id) { machine, now in machine.disconnect(.protocolError, detail: detail, now: now) }
    }

    /// Ends the link to a peer this side connected to but does not accept now that it knows who it is (a chat's
    /// person said no to a stranger it dialled): the goodbye says `notAccepted` (PROTOCOL.md 4.7), which the peer's
    /// session reports as a deny by the user.
    public func disconnect(_ peerID: PeerID, notAccepted detail: String) {
        guard let id = peers[peerID]?.connectedLink ?? connectingLink(of: peerID) else { return }
        update(id) { machine, now in
            machine.disconnect(.notAccepted, detail: Limits.clippedDetail(detail), now: now)
        }
    }

    /// GameKit's `disconnectFromAllPeers`.
    public func disconnectAll() {
        for peer in peers.values {
            if let id = peer.connectedLink { disconnectLink(id, reason: .disconnected) }
        }
    }

    private func connectingLink(of peerID: PeerID) -> LinkID? {
        if case .connecting(let id?) = peers[peerID]?.connection { return id }
        return nil
    }

    // MARK: Messages

    /// GameKit's `sendData:toPeers:withDataMode:`.
    ///
    /// Reliable: every peer must be connected (checked before anything is sent); returns once the message is
    /// queued, waiting while a peer's queue is full. Unreliable: never blocks; larger than
    /// `Limits.maxDatagramPayload` is refused.
    public func send(_ data: [UInt8], to peerIDs: [PeerID], mode: DataMode = .reliable) async throws {
        guard !isClosed else { throw SessionError.sessionClosed }
        var targets: [(PeerID, LinkID)] = []
        for peerID in peerIDs {
            guard let peer = peers[peerID] else { throw SessionError.unknownPeer(peerID) }
            guard let id = peer.connectedLink else { throw SessionError.notConnected(peer.displayName) }
            targets.append((peerID, id))
        }
        switch mode {
        case .reliable:
            guard data.count <= Limits.maxMessageSize else {
                throw SessionError.messageTooLarge(size: data.count, limit: Limits.maxMessageSize)
            }
            var writers: [LinkWriter] = []
            let now = clock.now
            for (_, id) in targets {
                guard var link = links[id], let bytes = link.machine.message(data, now: now) else { continue }
                links[id] = link
                link.writer.enqueue(bytes)
                writers.append(link.writer)
            }
            // Each peer's queue is waited on separately; a peer that stops reading is cut off by the stall
            // deadline in `tick`, so it cannot hold this call (and the other peers) forever.
            for writer in writers where writer.queuedBytes >= writer.highWater {
                try await writer.waitForRoom()
            }
        case .unreliable:
            try sendDatagram(data, to: targets.map(\.0))
        }
    }

    /// GameKit's `sendDataToAllPeers:withDataMode:`: every connected peer (none is not an error).
    public func sendToAll(_ data: [UInt8], mode: DataMode = .reliable) async throws {
        let connected = peers.values.filter { $0.connectedLink != nil }.map(\.peerID).sorted()
        try await send(data, to: connected, mode: mode)
    }
}
