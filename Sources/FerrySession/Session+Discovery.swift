import FerryStateMachines
import FerrySystem
import FerryWire

extension Session {
    /// Binds the shared discovery port (every ferry process of the host shares it through SO_REUSEPORT) and
    /// joins the group on the chosen interfaces.
    func openDiscovery() throws {
        let all: [NetworkInterface]
        do {
            all = try NetworkInterface.all()
        } catch {
            throw SessionError.discoveryUnavailable("cannot list network interfaces: \(error)")
        }
        var chosen: [NetworkInterface]
        if let names = configuration.interfaces {
            chosen = all.filter { names.contains($0.name) && $0.isUp && $0.ipv4 != nil }
            let missing = names.filter { name in !chosen.contains { $0.name == name } }
            if !missing.isEmpty {
                throw SessionError.invalidConfiguration(
                    "no usable interface named \(missing.joined(separator: ", ")) (it must be up and have an IPv4"
                        + " address; `ip -brief address` lists them)")
            }
        } else {
            chosen = all.filter { $0.isUp && $0.ipv4 != nil && ($0.supportsMulticast || $0.isLoopback) }
        }
        guard !chosen.isEmpty, let group = IPv4Address(Discovery.multicastGroup) else {
            throw SessionError.discoveryUnavailable("no network interface with an IPv4 address is up")
        }
        let socket: UDPSocket
        do {
            socket = try reactor.openUDP(
                bindingTo: .ipv4(.any, port: Discovery.port), reuseAddress: true, reusePort: true)
        } catch {
            throw SessionError.discoveryUnavailable("cannot bind UDP port \(Discovery.port): \(error)")
        }
        var joined: [IPv4Address] = []
        for interface in chosen {
            guard let address = interface.ipv4, !joined.contains(address) else { continue }
            do {
                try socket.joinMulticast(group: group, interface: address)
                joined.append(address)
            } catch {
                log("discovery: cannot join the group on \(interface.name): \(error)")
                continue  // an interface without multicast: skip it, the others still work
            }
        }
        guard !joined.isEmpty else {
            socket.close()
            throw SessionError.discoveryUnavailable("could not join the discovery group on any interface")
        }
        try? socket.setMulticastLoop(true)
        try? socket.setMulticastTTL(1)
        discoverySocket = socket
        discoveryInterfaces = joined
        let via = joined.map(\.description).joined(separator: ", ")
        log("discovery on \(Discovery.multicastGroup):\(Discovery.port) via \(via)")
    }

    /// Our beacon, with the flags of the moment.
    func beacon(query: Bool, leaving: Bool) -> Beacon {
        var flags: BeaconFlags = []
        if query { flags.insert(.query) }
        if leaving { flags.insert(.leaving) }
        if !configuration.takesMessages { flags.insert(.filesOnly) }
        if configuration.mode != .client, serverStateValue == .acceptingConnections,
            connectedCountOutsideSwarm < configuration.maxPeers, !leaving
        {
            flags.insert(.available)
        }
        return Beacon(
            flags: flags, mode: configuration.mode, peerID: localPeerID, deviceID: configuration.deviceID,
            tcpPort: listenPort, sessionID: configuration.sessionID, displayName: configuration.displayName)
    }

    /// Multicasts our beacon on every discovery interface.
    func announce(query: Bool, leaving: Bool = false) {
        guard let socket = discoverySocket, let group = IPv4Address(Discovery.multicastGroup) else { return }
        let bytes = beacon(query: query, leaving: leaving).encoded()
        for interface in discoveryInterfaces {
            do {
                try socket.setMulticastInterface(interface)
                try socket.send(bytes, to: .ipv4(group, port: Discovery.port))
            } catch {
                continue
            }
        }
    }

    func beaconArrived(_ bytes: [UInt8], from address: SocketAddress) {
        guard !isClosed else { return }
        let beacon: Beacon
        do {
            beacon = try Beacon(decoding: bytes[...])
        } catch {
            statistics.beaconsRejected += 1
            log("beacon from \(address) rejected: \(error)", level: 2)
            return
        }
        log("beacon from \(address): \(beacon.displayName) \(beacon.peerID) \(beacon.flags)", level: 2)
        let peerAddress = address.withPort(beacon.tcpPort)
        handleDiscovery(discoveryCache.beaconReceived(beacon, from: peerAddress, now: clock.now))
    }

    func handleDiscovery(_ actions: [DiscoveryCache<SocketAddress>.Action]) {
        for action in actions {
            switch action {
            case .announce(let query):
                announce(query: query)
            case .peerFound(let record), .peerUpdated(let record):
                // Anyone can send a beacon with any peer ID and device ID: a peer keeps the device ID it was first
                // known by (an honest peer never changes it: peer IDs are new for each session), and while it has
                // an authenticated link, the name and mode of its hello. Otherwise a beacon between a stranger's
                // hello and its request could lend it a pinned device ID (`AcceptPolicy.trusted`).
                if let known = peers[record.peerID], known.deviceID != record.deviceID {
                    statistics.beaconsRejected += 1
                    log(
                        "beacon for \(record.peerID) rejected: it names device \(record.deviceID.shortDescription),"
                            + " known as \(known.deviceID.shortDescription)")
                    continue
                }
                var peer = peers[record.peerID] ?? PeerRecord(
                    peerID: record.peerID, deviceID: record.deviceID, displayName: record.displayName,
                    mode: record.mode)
                if !links.values.contains(where: { $0.peerID == record.peerID }) {
                    peer.displayName = record.displayName
                    peer.mode = record.mode
                    peer.takesMessages = record.takesMessages
                }
                peer.address = record.address
                peer.isDiscovered = true
                peer.isAcceptingConnections = record.isAvailable
                peers[record.peerID] = peer
                if peer.reportedState == peer.state, case .peerUpdated = action {
                    emit(.peerStateChanged(peer.info, peer.state, reason: nil))
                } else {
                    reportState(of: record.peerID)
                }
            case .peerLost(let peerID):
                guard var peer = peers[peerID] else { continue }
                peer.isDiscovered = false
                peer.isAcceptingConnections = false
                peers[peerID] = peer
                reportState(of: peerID)
                forgetIfTransient(peerID)  // not while a link (an authenticated hello) still names it
            }
        }
    }

    /// Probes manual addresses (`--peer`) that have not answered yet, every few seconds.
    func probeManualAddresses(now: ContinuousClock.Instant) {
        for (address, due) in manualAddresses where now >= due {
            manualAddresses[address] = now + .seconds(5)
            Task { [weak self] in
                guard let self else { return }
                do {
                    try await self.probe(address)
                    await self.manualAddressAnswered(address)
                } catch let error as SessionError {
                    await self.manualAddressFailed(address, error)
                } catch {}
            }
        }
    }

    func manualAddressAnswered(_ address: SocketAddress) {
        manualAddresses.removeValue(forKey: address)
    }

    /// Reports the first failure of each manual address; it is probed again every few seconds regardless.
    func manualAddressFailed(_ address: SocketAddress, _ error: SessionError) {
        guard manualAddresses[address] != nil, !manualFailuresReported.contains(address) else { return }
        manualFailuresReported.insert(address)
        emit(.sessionError(error))
    }

    /// Adds manual addresses to probe until they answer (`--peer HOST:PORT`).
    public func addManualPeers(_ addresses: [SocketAddress]) {
        let now = clock.now
        for address in addresses where manualAddresses[address] == nil {
            manualAddresses[address] = now
        }
        probeManualAddresses(now: now)
    }
}
