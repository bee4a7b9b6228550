import FerrySession
import FerryStateMachines
import FerryWire

extension PeersCommand {
    /// Browses as a client (it is never listed itself), probes manual addresses, and prints each peer when it is
    /// found and when its state changes, until the timeout or Ctrl-C.
    public func run(context: CommandContext) async throws -> ExitCode {
        let setup = try SessionSetup(global: global, context: context, mode: .client, acceptPolicy: .none)
        let json = self.json
        let timeout = self.timeout
        let session = global.session
        let seen = try await setup.run { session in
            await session.addManualPeers(setup.manualPeers)
            return await withTaskGroup(of: Int?.self) { group in
                group.addTask {
                    var seen = Set<PeerID>()
                    // Printed above the first row, so that finding nobody prints no table at all.
                    var headerPrinted = false
                    for await event in session.events {
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
                        seen.insert(peer.peerID)
                        if json {
                            var line = JSONLine(event: JSONEvents.Peers.peer)
                            if case .object(let pairs) = PeerFormat.json(peer.with(state: state)) {
                                for pair in pairs { line.append(pair.key, pair.value) }
                            }
                            context.stdout.writeLine(line.text)
                        } else {
                            if seen.count == 1 && !headerPrinted {
                                context.stdout.writeLine(PeerFormat.header)
                                headerPrinted = true
                            }
                            context.stdout.writeLine(PeerFormat.row(peer, state: state))
                        }
                    }
                    return seen.count
                }
                if timeout > 0 {
                    group.addTask {
                        try? await Task.sleep(for: .seconds(timeout))
                        return nil
                    }
                }
                var count = 0
                while let result = await group.next() {
                    if let result { count = result }
                    group.cancelAll()
                }
                return count
            }
        }
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
