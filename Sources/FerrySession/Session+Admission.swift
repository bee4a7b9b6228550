import FerrySecurity
import FerryStateMachines
import FerrySystem
import FerryWire

/// Bounds on what a stranger can make the session hold or show before it is accepted (promise 4 of docs/SECURITY.md).
///
/// Why here: `incoming` and `connectionRequested` are the two doors a stranger knocks on; keeping their limits in one
/// place keeps the list of bounds (docs/ARCHITECTURE.md, "Pre-authentication bounds") easy to check against code.
extension Session {
    /// The incoming links not (yet) accepted: before their hello, and after it while a request is pending.
    var pendingIncomingLinks: [LinkRecord] {
        links.values.filter { $0.isAcceptor && $0.machine.state != .connected }
    }

    /// Decides whether a new TCP connection may become a link. False: close it at once, its host already has
    /// `maxPendingLinksPerAddress` pending links (nothing of anyone else's is closed for it). True: it may; when
    /// `maxPendingLinks` are pending, the oldest of them was closed to make room.
    func admitConnection(from address: SocketAddress) -> Bool {
        let pending = pendingIncomingLinks
        let host = Self.hostKey(address)
        let fromHost = pending.count { Self.hostKey($0.remoteAddress) == host }
        if fromHost >= configuration.maxPendingLinksPerAddress {
            statistics.linksRefusedPerAddress += 1
            log("\(address): closed at once, \(fromHost) pending links from \(address.hostDescription) already")
            return false
        }
        if pending.count >= configuration.maxPendingLinks, let oldest = pending.min(by: { $0.id < $1.id }) {
            // Oldest first: a legitimate handshake takes milliseconds, an idle flood sits there.
            statistics.linksEvicted += 1
            log("\(oldest.id) from \(oldest.remoteAddress): closed unauthenticated, \(pending.count) pending links")
            evict(oldest)
        }
        return true
    }

    /// Closes a pending link without a word (it has not earned one) and forgets what it brought.
    private func evict(_ link: LinkRecord) {
        links.removeValue(forKey: link.id)
        link.writer.finish()
        link.stream.close()
        readerTasks.removeValue(forKey: link.id)?.cancel()
        if let peerID = link.peerID {
            if peers[peerID]?.pendingRequest == link.id { peers[peerID]?.pendingRequest = nil }
            forgetIfTransient(peerID)
        }
    }

    /// What the per-address cap counts as one host: the IPv4 address, or the /64 of an IPv6 address (one host
    /// usually owns a whole /64).
    static func hostKey(_ address: SocketAddress) -> SocketAddress {
        switch address {
        case .ipv4(let host, _): return .ipv4(host, port: 0)
        case .ipv6(let host, _, let scopeID):
            return .ipv6(IPv6Address(high: host.high, low: 0), port: 0, scopeID: scopeID)
        }
    }

    /// With `AcceptPolicy.ask`: whether this request may become a prompt, or the deny to send instead (no event).
    ///
    /// The peer is keyed by its device ID, which its certificate proves; a stranger can mint new ones, so the global
    /// rate is the hard bound and the per-peer rate keeps one noisy peer from using up everyone's prompts. A pinned
    /// peer is not a stranger: its requests are neither limited nor counted.
    func promptRefusal(for peer: PeerRecord) -> Deny? {
        guard trustedDevices[peer.deviceID] == nil else { return nil }
        guard let refusal = requestLimiter.admit(peer.deviceID, now: clock.now) else { return nil }
        statistics.requestsRateLimited += 1
        switch refusal {
        case .requesterExhausted:
            log(
                "\(peer.displayName) (\(peer.deviceID.shortDescription)): request denied, more than"
                    + " \(configuration.connectionRequestRatePerPeer) from this peer")
        case .globalExhausted:
            log(
                "\(peer.displayName) (\(peer.deviceID.shortDescription)): request denied, more than"
                    + " \(configuration.connectionRequestRate) requests")
        }
        return Deny(reason: .notAccepting, detail: "too many requests, try again later")
    }
}

extension Session {
    /// What an initiator's caller is told when the acceptor closed the connection without a word: the two ways a
    /// ferry acceptor sheds load (PROTOCOL.md 10.6), or nil for a real authentication failure.
    ///
    /// Why: a sender started together with many others would otherwise fail at once with a handshake error,
    /// although waiting a moment is all it takes. The per-address cap closes before the acceptor's preface; the
    /// global cap closes the oldest pending link at any point of its handshake, without a TLS alert (a TLS refusal
    /// sends one, and reads as `handshakeFailed`).
    static func busyDetail(for error: SecurityError) -> String? {
        switch error {
        case .closedBeforePreface:
            return "too many connections from this address are waiting"
        case .closedDuringHandshake:
            return "too many connections are waiting"
        default:
            return nil
        }
    }
}
