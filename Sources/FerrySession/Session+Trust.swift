import FerrySecurity
import FerryStateMachines
import FerryWire

extension Session {
    /// Checks a peer's hello against the certificate its link presented, against what discovery announced and
    /// against the pinned peers; refuses the link (and returns false) when any differs.
    ///
    /// The device ID is the SHA-256 of the certificate, so a peer cannot claim another device's ID without its
    /// private key. The checks, in order: the hello's device ID is the certificate's; the peer we meant to reach,
    /// and any peer already known under the hello's peer ID (announced by discovery, reached at a manual address,
    /// or connected), has that device ID, so a stranger cannot take over another peer's record by copying its peer
    /// ID from a beacon; no pinned peer of the same name has another one (a changed key is refused loudly and never
    /// re-paired silently).
    func authenticate(_ hello: Hello, on id: LinkID) -> Bool {
        guard let link = links[id] else { return false }
        guard let certified = link.stream.peer?.deviceID else {
            refuse(id, detail: "no authenticated certificate")
            return false
        }
        guard hello.deviceID == certified else {
            refuse(
                id,
                detail: "its hello names device \(hello.deviceID.shortDescription) but its certificate is"
                    + " \(certified.shortDescription)")
            return false
        }
        guard checkPin(on: id, certified: certified) else { return false }
        for known in [link.expectedPeer, hello.peerID].compactMap({ $0 }) {
            if let announced = peers[known], announced.deviceID != certified {
                refuse(
                    id,
                    detail: "peer \(known) is known as device \(announced.deviceID.shortDescription) but this link"
                        + " presents \(certified.shortDescription)")
                return false
            }
        }
        // A pin without a name (`ferry trust add ID`) protects no name: "" must not match a blank display name.
        if trustedDevices[certified] == nil, !DisplayNameMatch.key(hello.displayName).isEmpty,
            let pinned = trustedDevices.first(where: { DisplayNameMatch.same($0.value, hello.displayName) })
        {
            let error = SessionError.pinnedKeyChanged(name: hello.displayName, pinned: pinned.key, presented: certified)
            log(error.description)
            emit(.sessionError(error))
            settleWaiters(of: id, .failure(error))
            refuse(id, detail: "the name \(pinned.value) is pinned to another key")
            return false
        }
        return true
    }

    /// Both pairing nonces are known: the link's pairing code (PROTOCOL.md 7).
    func pairingAgreed(on id: LinkID, initiatorNonce: [UInt8], acceptorNonce: [UInt8]) {
        guard let link = links[id], let peerID = link.peerID, let certified = link.stream.peer?.deviceID else { return }
        let code = PairingCode.derive(
            from: link.stream, local: configuration.deviceID, peer: certified, initiatorNonce: initiatorNonce,
            acceptorNonce: acceptorNonce)
        links[id]?.pairingCode = code
        // Another link connected to the peer keeps its code (this one is denied, or dropped as a duplicate).
        if let connected = peers[peerID]?.connectedLink, connected != id { return }
        peers[peerID]?.pairingCode = code
        // The initiator learns the code before the acceptor answers: its person can read it while the other is asked.
        if !link.isAcceptor, !link.isSwarm, link.machine.state == .requesting, let peer = peers[peerID] {
            emit(.awaitingAnswer(peer.info))
        }
    }

    /// Pins a peer: `AcceptPolicy.trusted` accepts it, and its name can no longer be shown by another key. A link
    /// open now to another, unpinned device that shows that name is closed at once (its goodbye says why), as a new
    /// one would be refused (`authenticate`).
    public func trust(_ deviceID: DeviceID, name: String) {
        trustedDevices[deviceID] = name
        for (peerID, peer) in peers where peer.deviceID == deviceID {
            peers[peerID]?.isTrusted = true
        }
        guard !DisplayNameMatch.key(name).isEmpty else { return }
        cutOff(detail: "the name \(name) is now pinned to another key") { certified, peer in
            certified != deviceID && trustedDevices[certified] == nil && DisplayNameMatch.same(name, peer.displayName)
        }
    }

    /// The pinned peers: device ID and the name it was pinned under.
    public var trustedPeers: [DeviceID: String] { trustedDevices }

    /// Unpins a peer. With `AcceptPolicy.trusted` (a service that lets in pinned peers only), every link of that
    /// device is closed at once with a goodbye that says why: the pin was what let it in, and a removed peer must
    /// not keep delivering over a link it holds open. Its transfers end as with any lost link (the transfer engine
    /// keeps their staged data for a resume). Swarm links stay (a vouch, not the pin, admitted them; an offer on one
    /// from an unpinned device is refused anyway: `refusedOfferOnSwarmLink`).
    public func untrust(_ deviceID: DeviceID) {
        trustedDevices.removeValue(forKey: deviceID)
        for (peerID, peer) in peers where peer.deviceID == deviceID {
            peers[peerID]?.isTrusted = false
        }
        guard configuration.acceptPolicy == .trusted else { return }
        cutOff(detail: "this device is no longer trusted here") { certified, _ in certified == deviceID }
    }

    /// Closes every link past its hello (swarm links aside) whose certified device and peer match `cut`, with a
    /// goodbye `disconnected` carrying `detail`.
    private func cutOff(detail: String, _ cut: (DeviceID, PeerRecord) -> Bool) {
        for id in links.keys.sorted() {
            guard let link = links[id], !link.isSwarm, let peerID = link.peerID, let peer = peers[peerID],
                let certified = link.stream.peer?.deviceID, cut(certified, peer)
            else { continue }
            log("\(id) \(link.remoteAddress): closed: \(detail)")
            update(id) { machine, now in machine.disconnect(.disconnected, detail: detail, now: now) }
        }
    }

    /// Ends a link whose peer failed authentication, saying why.
    func refuse(_ id: LinkID, detail: String) {
        statistics.linksUnauthenticated += 1
        if let link = links[id] { log("\(id) \(link.remoteAddress): refused: \(detail)") }
        let peerName = links[id]?.remoteAddress.description ?? "\(id)"
        settleWaiters(of: id, .failure(.authenticationFailed(peer: peerName, detail: detail)))
        update(id) { machine, now in machine.refuse(detail, now: now) }
    }
}
