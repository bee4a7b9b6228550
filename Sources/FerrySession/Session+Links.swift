import Glibc
import FerrySecurity
import FerryStateMachines
import FerrySystem
import FerryWire
import Foundation

extension Session {
    // MARK: Sockets

    func openListener() throws {
        let requested = configuration.listenPort ?? Discovery.defaultTCPPort
        do {
            listener = try reactor.listenTCP(on: .ipv4(.any, port: requested))
        } catch let error as SystemError where error.errno.rawValue == EADDRINUSE {
            guard configuration.listenPort == nil else { throw SessionError.portInUse(requested) }
            listener = try reactor.listenTCP(on: .ipv4(.any, port: 0))
        }
        listenPort = listener?.localAddress.port ?? 0
    }

    func startLoops() {
        if let listener {
            loops.append(Task { [weak self] in
                while let connection = try? await listener.accept() {
                    guard let self else { connection.close(); return }
                    await self.incoming(connection)
                }
            })
        }
        if let datagramSocket {
            loops.append(Task { [weak self] in
                while let (bytes, from) = try? await datagramSocket.receive(maxBytes: 2048) {
                    guard let self else { return }
                    await self.datagramArrived(bytes, from: from)
                }
            })
        }
        if let discoverySocket {
            loops.append(Task { [weak self] in
                while let (bytes, from) = try? await discoverySocket.receive(maxBytes: 2048) {
                    guard let self else { return }
                    await self.beaconArrived(bytes, from: from)
                }
            })
        }
        let reactor = self.reactor
        loops.append(Task { [weak self] in
            let clock = ContinuousClock()
            var next = clock.now
            while !Task.isCancelled {
                next = next + .milliseconds(100)
                do { try await reactor.sleep(until: next) } catch { return }
                guard let self else { return }
                await self.tick()
                let now = clock.now
                if next < now - .seconds(1) { next = now }
            }
        })
    }

    // MARK: Links

    /// A peer opened a link to us.
    func incoming(_ connection: TCPConnection) {
        guard !isClosed else { connection.close(); return }
        statistics.linksAccepted += 1
        // Before anything is allocated for it: per-address and global caps on links not yet accepted.
        guard admitConnection(from: connection.remoteAddress) else {
            connection.close()
            return
        }
        let stream: TLSStream
        do {
            stream = try TLSStream(over: connection, context: tlsContext, role: .server)
        } catch {
            log("\(connection.remoteAddress): \(error)")
            connection.close()
            return
        }
        let id = adopt(stream, role: .acceptor, expectedPeer: nil)
        log("\(id) accepted from \(connection.remoteAddress)", level: 2)
    }

    func localHello() -> Hello {
        var capabilities: Capabilities =
            configuration.transfersEnabled ? [.zlib, .zstd, .datagrams, .transfers] : [.zlib, .datagrams]
        if !configuration.takesMessages { capabilities.insert(.filesOnly) }
        return Hello(
            peerID: localPeerID, deviceID: configuration.deviceID, mode: configuration.mode,
            capabilities: capabilities, listenPort: listenPort, datagramPort: datagramPort,
            sessionID: configuration.sessionID, displayName: configuration.displayName)
    }

    /// Takes a fresh stream into the session: state machine, writer, reader. The reader's first read runs the
    /// stream's TLS handshake; the machine's hello waits in the writer until it is done.
    func adopt(_ stream: TLSStream, role: LinkStateMachine.Role, expectedPeer: PeerID?) -> LinkID {
        nextLinkID += 1
        let id = LinkID(rawValue: nextLinkID)
        let now = clock.now
        // The acceptor commits to its pairing nonce in its hello and reveals it after the initiator sent its own.
        let pairingNonce = PairingCode.nonce()
        var hello = localHello()
        if role == .acceptor { hello.pairingCommitment = SHA256Hasher.digest(pairingNonce) }
        let machine = LinkStateMachine(
            role: role,
            configuration: .init(
                localHello: hello, handshakeTimeout: configuration.handshakeTimeout,
                disconnectTimeout: configuration.disconnectTimeout, pairingNonce: pairingNonce),
            now: now)
        let writer = LinkWriter(stream: stream)
        links[id] = LinkRecord(
            id: id, machine: machine, stream: stream, writer: writer, remoteAddress: stream.remoteAddress,
            expectedPeer: expectedPeer)
        writerTasks[id] = Task { [weak self] in
            await writer.run()
            await self?.writerFinished(id)
        }
        readerTasks[id] = Task { [weak self] in
            var reader = LinkReader(stream: stream)
            let pause = self?.pausedReaders
            let backlog = self?.transferBacklog
            while true {
                await pause?.wait(id)
                await backlog?.waitForRoom(id)
                let input: LinkInput
                do {
                    input = try await reader.next()
                } catch let error as SecurityError {
                    await self?.linkSecurityFailed(id, error)
                    await self?.readerFinished(id)
                    return
                } catch {
                    input = .end
                }
                guard let self else { return }
                guard reader.apply(await self.linkReceived(id, input)) else {
                    await self.readerFinished(id)
                    return
                }
            }
        }
        update(id) { machine, now in machine.start(now: now) }
        return id
    }

    /// The link's TLS stream refused the peer or failed.
    func linkSecurityFailed(_ id: LinkID, _ error: SecurityError) {
        guard let link = links[id] else { return }
        statistics.linksUnauthenticated += 1
        log("\(id) \(link.remoteAddress): \(error)")
        if !link.isAcceptor, let busy = Self.busyDetail(for: error) {
            // Not an attack on us: the acceptor is busy. `connect` says so, and its caller may try again.
            let name = link.expectedPeer.flatMap { peers[$0]?.displayName } ?? link.remoteAddress.description
            settleWaiters(of: id, .failure(.busy(peer: name, detail: busy)))
        }
        update(id) { machine, _ in machine.securityFailed(error.description) }
    }

    /// Input arrived on a link's reader (`.end`: the stream ended). Returns what the reader does next: decode
    /// frames up to the machine's current limit, drain, or stop.
    ///
    /// A link closed by the protocol (a goodbye either way) is read on, its bytes dropped, until the peer closes its
    /// side: closing a socket with unread bytes makes the kernel reset it, and the reset destroys what we sent
    /// last (a transferCancel, the goodbye) before the peer has read it.
    func linkReceived(_ id: LinkID, _ input: LinkInput) -> LinkReading {
        if links[id] != nil {
            switch input {
            case .end:
                update(id) { machine, _ in machine.streamEnded() }
                return .stop
            case .frames(let frames):
                update(id) { machine, now in machine.framesReceived(frames, now: now) }
            case .refused(let error):
                update(id) { machine, now in machine.framingFailed(error, now: now) }
            case .drained:
                update(id) { machine, now in machine.framesReceived([], now: now) }
            }
            if case .refused = input {} else if let link = links[id] {
                return .frames(maximumPayloadLength: link.machine.maximumPayloadLength)
            }
        } else if case .end = input {
            return .stop
        } else if var entry = closingStreams[id] {
            entry.deadline = min(clock.now + Self.closeGrace, entry.limit)  // the peer is still reading ours
            closingStreams[id] = entry
        }
        return closingStreams[id] != nil ? .drain : .stop
    }

    /// Runs one event through a link's state machine and carries out the actions.
    ///
    /// The record is moved out of the table while the machine runs, so the machine's receive buffer is uniquely
    /// referenced and grows in place; a copy left in the table would make every read copy the whole buffer.
    func update(_ id: LinkID, _ event: (inout LinkStateMachine, ContinuousClock.Instant) -> [LinkStateMachine.Action]) {
        guard var link = links.removeValue(forKey: id) else { return }
        let actions = event(&link.machine, clock.now)
        links[id] = link
        perform(actions, on: id)
    }

    func perform(_ actions: [LinkStateMachine.Action], on id: LinkID) {
        for action in actions {
            guard let link = links[id] else { return }
            switch action {
            case .send(let bytes):
                link.writer.enqueue(bytes)
            case .helloReceived(let hello):
                helloReceived(hello, on: id)
            case .connectionRequested:
                connectionRequested(on: id)
            case .connected:
                linkConnected(id)
            case .messageReceived(let payload):
                if let peerID = link.peerID, let peer = peers[peerID] {
                    emit(.dataReceived(Data(payload), from: peer.info, mode: .reliable))
                }
            case .transferFrameReceived(let frame):
                transferFrameReceived(frame, on: id)
            case .pairingAgreed(let initiatorNonce, let acceptorNonce):
                pairingAgreed(on: id, initiatorNonce: initiatorNonce, acceptorNonce: acceptorNonce)
            case .close(let reason):
                linkClosed(id, reason: reason)
            }
        }
    }

    func helloReceived(_ hello: Hello, on id: LinkID) {
        guard var link = links[id] else { return }
        guard authenticate(hello, on: id) else { return }
        if let expected = link.expectedPeer, expected != hello.peerID {
            link.peerID = nil
            links[id] = link
            settleWaiters(
                of: id,
                .failure(.connectFailed(peer: "\(expected)", underlying: "a different peer answers at that address")))
            update(id) { machine, now in machine.disconnect(.disconnected, detail: "wrong peer", now: now) }
            return
        }
        link.peerID = hello.peerID
        links[id] = link
        var peer = peers[hello.peerID] ?? PeerRecord(
            peerID: hello.peerID, deviceID: hello.deviceID, displayName: hello.displayName, mode: hello.mode)
        peer.deviceID = hello.deviceID
        peer.displayName = hello.displayName
        peer.mode = hello.mode
        peer.takesMessages = !hello.capabilities.contains(.filesOnly)
        // This link's code comes with its pairing nonces (`pairingAgreed`). A probe agrees on none, and a second link
        // to a connected peer (denied, or the one of two dialled at once that is dropped) is not the link people
        // compare: neither wipes the connected link's code (`--peer ADDRESS` is probed while the command connects).
        if link.machine.role != .initiator(.probe), peer.connectedLink == nil { peer.pairingCode = nil }
        peer.isTrusted = trustedDevices[hello.deviceID] != nil
        if peer.address == nil {
            if link.isAcceptor {
                if hello.listenPort != 0 { peer.address = link.remoteAddress.withPort(hello.listenPort) }
            } else {
                peer.address = link.remoteAddress
            }
        }
        if !link.isAcceptor, link.expectedPeer == nil, !link.isSwarm {
            peer.isManual = true  // reached at an address the user gave: remembered like a discovered peer
        }
        if !link.isAcceptor, case .none = peer.connection, link.machine.role != .initiator(.probe) {
            peer.connection = .connecting(id)
        }
        peers[hello.peerID] = peer
    }

    func connectionRequested(on id: LinkID) {
        guard let link = links[id], let peerID = link.peerID, var peer = peers[peerID] else { return }
        let swarm = isSwarmRequest(on: id)  // vouched for: no policy, no prompt (Session+Swarm)
        switch swarm ? swarmAdmission(for: peerID) : admission(for: peerID, policy: configuration.acceptPolicy) {
        case .accept:
            if swarm { links[id]?.isSwarm = true }
            update(id) { machine, now in machine.accept(now: now) }
        case .deny(let deny):
            update(id) { machine, now in machine.deny(deny, now: now) }
            if deny.reason != .alreadyConnected {
                emit(.connectionDenied(peer.info, reason: deny.reason, detail: deny.detail))
            }
        case .ask:
            if let deny = promptRefusal(for: peer) {
                update(id) { machine, now in machine.deny(deny, now: now) }
                emit(.connectionDenied(peer.info, reason: deny.reason, detail: deny.detail))
                return
            }
            if let previous = peer.pendingRequest, previous != id {
                update(previous) { machine, now in
                    machine.deny(Deny(reason: .alreadyConnected, detail: "superseded by a newer request"), now: now)
                }
            }
            peer.pendingRequest = id
            peers[peerID] = peer
            emit(.connectionRequested(peer.info))
        }
    }

    func admission(for peerID: PeerID, policy: AcceptPolicy) -> Admission {
        return Admission.decide(
            mode: configuration.mode, serverState: serverStateValue,
            alreadyConnected: peers[peerID]?.connectedLink != nil, connectedCount: connectedCountOutsideSwarm,
            maxPeers: configuration.maxPeers, policy: policy,
            peerIsTrusted: peers[peerID].map { trustedDevices[$0.deviceID] != nil } ?? false)
    }

    func linkConnected(_ id: LinkID) {
        guard let link = links[id], let peerID = link.peerID, var peer = peers[peerID] else { return }
        if let other = peer.connectedLink, other != id, let otherLink = links[other] {
            // Two links to one peer (both asked at once): both sides keep the link opened by the lower peer ID.
            // Closing the other link settles its waiters as connected (see `linkClosed`).
            let thisInitiator = link.isAcceptor ? peerID : localPeerID
            let otherInitiator = otherLink.isAcceptor ? peerID : localPeerID
            guard thisInitiator < otherInitiator else {
                update(id) { machine, now in machine.disconnect(.disconnected, detail: "duplicate link", now: now) }
                return
            }
            peer.connection = .connected(id)  // first, so that closing the other one reports no disconnect
            peers[peerID] = peer
            update(other) { machine, now in machine.disconnect(.disconnected, detail: "duplicate link", now: now) }
            peer = peers[peerID] ?? peer
        }
        peer.connection = .connected(id)
        peer.pendingRequest = nil
        peer.isSwarmLink = link.isSwarm
        if let code = links[id]?.pairingCode { peer.pairingCode = code }  // the kept link's, of two dialled at once
        // Datagrams only when both hellos announce them (PROTOCOL.md 5); ours always does.
        if let hello = link.machine.peerHello, hello.datagramPort != 0, hello.capabilities.contains(.datagrams) {
            peer.datagramAddress = link.remoteAddress.withPort(hello.datagramPort)
        }
        if let ciphers = DatagramCipher.pair(for: link.stream, isInitiator: !link.isAcceptor) {
            peer.datagrams = DatagramChannel(send: ciphers.send, receive: ciphers.receive)
        }
        peers[peerID] = peer
        reportState(of: peerID)
        settleWaiters(of: id, .success(peer.info))
        if configuration.mode != .client, discoverySocket != nil { announce(query: false) }
    }
}

extension PeerInfo {
    /// The same peer as seen in another state (events report the state a change led to).
    public func with(state: PeerState) -> PeerInfo {
        var copy = self
        copy.state = state
        return copy
    }
}
