import FerryLocalSend
import FerrySession
import FerryStateMachines
import FerrySystem
import FerryWire

extension PeersCommand {
    /// What the listing prints: a session event, or a LocalSend device found, changed or lost.
    private enum Listed: Sendable {
        case session(SessionEvent)
        case localSend(LocalSendDiscovery.Event)
    }

    /// Browses as a client (it is never listed itself), probes manual addresses, and prints each peer when it is
    /// found and when its state changes, until the timeout or Ctrl-C; LocalSend devices likewise, unless
    /// `--no-localsend`.
    public func run(context: CommandContext) async throws -> ExitCode {
        let setup = try SessionSetup(global: global, context: context, mode: .client, acceptPolicy: .none)
        let json = self.json
        let timeout = self.timeout
        let session = global.session
        let reactor = try Reactor()
        defer { reactor.shutdown() }
        var discovery: LocalSendDiscovery?
        if localSend {
            discovery = try await LocalSendPresence.start(global: global, context: context, reactor: reactor) { line in
                if json {
                    context.stdout.writeLine(JSONLine(event: JSONEvents.Peers.error, ["message": .string(line)]).text)
                } else {
                    context.stderr.writeLine("Warning: " + TerminalText.escape(line))
                }
            }
        }
        let localSendDiscovery = discovery
        let seen = try await setup.run(reactor: reactor) { session in
            await session.addManualPeers(setup.manualPeers)
            let (listed, continuation) = AsyncStream.makeStream(of: Listed.self)
            return await withTaskGroup(of: Int?.self) { group in
                group.addTask {
                    for await event in session.events { continuation.yield(.session(event)) }
                    continuation.finish()
                    return nil
                }
                if let localSendDiscovery {
                    group.addTask {
                        for await event in localSendDiscovery.events { continuation.yield(.localSend(event)) }
                        return nil
                    }
                }
                group.addTask {
                    var seen = 0
                    // Printed above the first row, so that finding nobody prints no table at all.
                    var headerPrinted = false
                    func header() {
                        if !json && !headerPrinted {
                            context.stdout.writeLine(PeerFormat.header)
                            headerPrinted = true
                        }
                    }
                    var ferryPeers = Set<PeerID>()
                    var localSendDevices = Set<String>()
                    for await item in listed {
                        switch item {
                        case .session(let event):
                            if case .sessionError(let error) = event {
                                if json {
                                    context.stdout.writeLine(
                                        JSONLine(
                                            event: JSONEvents.Peers.error, ["message": .string(error.description)]
                                        ).text)
                                } else {
                                    context.stderr.writeLine("Warning: " + TerminalText.escape(error.description))
                                }
                            }
                            // A swarm link's coming and going is the transfer engine's plumbing (PeerInfo+SwarmLink).
                            guard case .peerStateChanged(let peer, let state, _) = event,
                                !peer.isSwarmLinkChange(to: state)
                            else { continue }
                            if ferryPeers.insert(peer.peerID).inserted { seen += 1 }
                            if json {
                                var line = JSONLine(event: JSONEvents.Peers.peer)
                                if case .object(let pairs) = PeerFormat.json(peer.with(state: state)) {
                                    for pair in pairs { line.append(pair.key, pair.value) }
                                }
                                context.stdout.writeLine(line.text)
                            } else {
                                header()
                                context.stdout.writeLine(PeerFormat.row(peer, state: state))
                            }
                        case .localSend(let event):
                            let (record, lost): (LocalSendFormat.Record, Bool)
                            switch event {
                            case .found(let found), .updated(let found): (record, lost) = (found, false)
                            case .lost(let gone): (record, lost) = (gone, true)
                            }
                            if localSendDevices.insert(record.key).inserted { seen += 1 }
                            if json {
                                var line = JSONLine(event: JSONEvents.Peers.localsend)
                                for (key, value) in LocalSendFormat.json(record, lost: lost) { line.append(key, value) }
                                context.stdout.writeLine(line.text)
                            } else {
                                header()
                                context.stdout.writeLine(LocalSendFormat.row(record, lost: lost))
                            }
                        }
                    }
                    return seen
                }
                if timeout > 0 {
                    group.addTask {
                        try? await Task.sleep(for: .seconds(timeout))
                        return nil
                    }
                }
                // The first task to end (the timeout, or the session's events) ends the listing; the printer's
                // count is collected as it stops.
                var count = 0
                _ = await group.next()
                continuation.finish()
                await localSendDiscovery?.stop()
                group.cancelAll()
                while let result = await group.next() {
                    if let result { count = result }
                }
                return count
            }
        }
        await discovery?.stop()
        if Task.isCancelled { throw CancellationError() }
        if seen == 0 && !json {
            context.stderr.writeLine(
                "No peers found in session '\(TerminalText.escape(session))'"
                    + (global.variables["session"].map { " (from \($0))" } ?? "")
                    + (timeout > 0 ? " within \(timeout.shortDescription) s." : "."))
        }
        return .success
    }
}
