import FerrySession
import FerryTransfer
import FerryWire

extension TrustCommand.Add {
    /// `ferry trust add NAME` / `--peer HOST:PORT`: connects to a running `ferry receive`, shows its device ID and
    /// the pairing code (which the receiver shows as soon as the link is up), and pins it when the person says the
    /// codes match. A NAME that no live peer answers to within `--wait`, but that connected to this install's own
    /// receiver lately (a sender, `RecentPeers`), is compared with what its link showed instead (`pinRecentPeer`):
    /// a live peer goes first, since the record may be older than it or a stranger's.
    ///
    /// The same comparison as `ferry send` makes before a first transfer, without sending anything: afterwards the
    /// peer is trusted both ways that matter here (`send` does not ask again, and its name cannot be taken by
    /// another key).
    func pairOverNetwork(context: CommandContext) async throws -> ExitCode {
        // (Refusals below: a peer that answered to a short ID with another key; a link with no code to compare.)
        guard context.isStdinTerminal, context.isStderrTerminal else {
            throw CLIError.failure(
                "pinning a peer by name compares its pairing code on both screens, which needs a terminal; without"
                    + " one, pin it by its device ID: ferry trust add ID --name NAME (its 'ferry id' prints the ID)")
        }
        let recent = peerName.map { RecentPeers(environment: context.environment).entries(matching: $0) } ?? []
        guard let live = try await pairWithLivePeer(context: context, orElseRecord: !recent.isEmpty) else {
            return try await pinFromRecord(recent, context: context)
        }
        return live
    }

    /// `pairOverNetwork` from the record of this install's receiver: refuses several devices of the name and an
    /// entry without a code, else asks the person (`pinRecentPeer`).
    private func pinFromRecord(_ entries: [RecentPeers.Entry], context: CommandContext) async throws -> ExitCode {
        if let peerName {
            var devices: [DeviceID] = []
            for device in entries.compactMap(\.device) where !devices.contains(device) { devices.append(device) }
            if devices.count > 1 {
                // Anyone can connect under any name: the person must say which device, by its ID.
                throw CLIError.failure(
                    "\(devices.count) devices that call themselves \(TerminalText.escape(peerName)) connected here"
                        + " lately (\(devices.map(\.shortDescription).joined(separator: ", "))); nothing was pinned:"
                        + " give the whole device ID its 'ferry id' prints: ferry trust add ID --name NAME")
            }
            if let entry = entries.first, let device = entry.device {
                guard entry.code != nil else {
                    throw CLIError.failure(
                        "\(TerminalText.escape(entry.name)) connected here lately with no pairing code to compare;"
                            + " nothing was pinned: give the whole device ID its 'ferry id' prints: ferry trust add ID"
                            + " --name NAME")
                }
                return try await pinRecentPeer(entry, device: device, typed: peerName, context: context)
            }
        }
        throw CLIError.failure("no peer to pin")  // not reached: called with entries of `peerName`
    }

    /// The live half of `pairOverNetwork`; nil when `orElseRecord` and no peer of the name was found (the record is
    /// asked then).
    private func pairWithLivePeer(context: CommandContext, orElseRecord: Bool) async throws -> ExitCode? {
        let target: PeerTarget
        if let peerName {
            target = try PeerTarget.parse(peerName, option: "peer")
        } else {
            target = try PeerTarget.parse(global.peers[0], option: "peer")
        }
        let setup = try SessionSetup(
            global: global, context: context, mode: .client, acceptPolicy: .none, transfersEnabled: true)
        let reporter = TransferReporter(context: context, json: false, bars: false, confirmsCodes: true)
        let configuration = TransferConfiguration(log: setup.configuration.log)
        let wait = self.wait
        let pinName = self.name
        return try await TransferSession.run(setup: setup, engine: configuration, reporter: reporter) {
            run -> ExitCode? in
            let resolver = TargetResolver(run: run, sessionID: global.session)
            let resolved: [PeerTarget: PeerInfo]
            do {
                resolved = try await resolver.resolve([target], until: .now + .seconds(wait), waited: wait)
            } catch let error as CLIError where orElseRecord {
                // No live peer of that name (not an ambiguous one): the record of this install's receiver is asked.
                let candidates = await run.tracker.reachable.map(PeerCandidate.init)
                if case .none = target.match(in: candidates, pinned: await run.session.trustedPeers) { return nil }
                throw error
            }
            let (peers, failures) = await resolver.connect([target], resolved: resolved)
            guard let peer = peers.first else {
                throw CLIError.failure(
                    "could not pin \(target): \(failures.first?.failure ?? "it could not be connected")")
            }
            let name = pinName ?? peerName.map { Self.pinName(typed: $0, chosen: peer.displayName) } ?? peer.displayName
            let label = TrustCommand.label(TrustedPeer(deviceID: peer.deviceID, name: name, added: .now))
            if let peerName, !TrustCommand.Add.answersTo(peerName, deviceID: peer.deviceID) {
                // A peer may call itself by another's short ID: the name matched, the key did not.
                throw CLIError.failure(
                    "could not pin \(peerName): the peer that answered to it, \(TerminalText.escape(peer.displayName)),"
                        + " has the device ID \(peer.deviceID), which does not begin with \(peerName); nothing was"
                        + " pinned (a peer may call itself by another's ID: use the whole device ID from its 'ferry id')"
                )
            }
            if peer.isTrusted {
                context.stdout.writeLine("Already trusted: \(label).")
                return ExitCode.success
            }
            guard peer.pairingCode != nil else {
                // Pinning means the person compared a code; a link without one cannot be checked that way.
                throw CLIError.failure(
                    "could not pin \(TerminalText.escape(peer.displayName)): its link has no pairing code to compare"
                        + " (an older ferry, or a peer that leaves it out), so nothing was pinned; pin it by its whole"
                        + " device ID from its 'ferry id': ferry trust add ID --name NAME")
            }
            reporter.say("\(TerminalText.escape(peer.displayName)) has the device ID \(peer.deviceID)")
            let answer = await PairingConfirmation(show: { reporter.say(lines: $0) }).ask(peer, pinning: true)
            try Task.checkCancellation()
            guard answer == .yes || answer == .always else {
                throw CLIError.failure(
                    "\(TerminalText.escape(peer.displayName)) was not trusted: "
                        + PairingConfirmation.refusal(answer).replacingOccurrences(
                            of: ": nothing was sent to it", with: "")
                        + "; run it again and answer y when both screens show the same code")
            }
            _ = try TrustStore(environment: context.environment).pin(peer.deviceID, name: name)
            context.stdout.writeLine("Trusted \(label).")
            return ExitCode.success
        }
    }
}
