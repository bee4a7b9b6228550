import FerrySession
import FerryStateMachines
import FerryWire

extension ChatCommand {
    /// The chat: connects to every peer it discovers (the lower peer ID asks, so two peers ask once), lets peers in
    /// by `--accept` (`ChatGate`: a stranger is a question to the person), sends each typed line to every member,
    /// and prints what arrives.
    public func run(context: CommandContext) async throws -> ExitCode {
        let sessionMode: PeerMode =
            switch mode {
            case .server: .server
            case .client: .client
            case .peer: .peer
            }
        let policy = Self.gatePolicy(accept, canAsk: context.isStdinTerminal)
        let setup = try SessionSetup(
            global: global, context: context, mode: sessionMode, acceptPolicy: Self.sessionPolicy(policy),
            maxPeers: maxPeers, disconnectTimeout: .seconds(disconnectTimeout))
        var printer = ChatPrinter(context: context, json: json)
        let input: AsyncStream<String>
        if let started = ChatTerminal.start(context: context) {
            printer.terminal = started.terminal
            input = started.lines
        } else {
            input = StandardInputLines.stream()
        }
        defer { ChatTerminal.restore() }
        if accept == .ask, policy == .trusted {
            context.stderr.writeLine(
                "Note: stdin is not a terminal, so no one can be asked: trusted peers join, every other is refused"
                    + " (use --accept all to let everyone in)")
        }
        let room = ChatRoom(
            gate: ChatGate(policy: policy, askTimeout: Self.askTimeout), printer: printer,
            trustStore: TrustStore(environment: context.environment))
        try await setup.run { [printer] session in
            printer.ready(
                session: session.configuration.sessionID, name: session.configuration.displayName,
                peerID: session.localPeerID, port: await session.listenPort)
            await withTaskGroup(of: Void.self) { group in
                group.addTask {
                    await room.events(of: session)
                }
                group.addTask {
                    await room.expireQuestions(of: session)
                }
                // As `receive` does: a peer pinned in another terminal (`ferry trust add`) is trusted at once, and a
                // refusal of it in this run is forgotten.
                let follower = TrustFollower(store: room.trustStore).follow(session: session) { result in
                    guard case .success(let change) = result else { return }
                    Task { await room.trustChanged(change, session: session) }
                }
                defer { follower.cancel() }
                for address in setup.manualPeers {
                    group.addTask {
                        do {
                            try await session.connect(toAddress: address, timeout: Self.connectTimeout)
                        } catch {
                            // The chat ended (end of input, /quit) before the connection was made: nothing failed.
                            if Task.isCancelled { return }
                            room.connectFailed(error, address: "\(address)")
                        }
                    }
                }
                // The input loop ends the chat: at /quit or end of input (or Ctrl-C, which cancels us).
                await room.input(input, session: session)
                group.cancelAll()
            }
            await session.disconnectAll()
        }
        if Task.isCancelled { throw CancellationError() }
        return .success
    }
}

extension ChatCommand {
    /// The policy in effect: `ask` only where someone can answer (stdin a terminal), else `trusted`, as `receive`.
    static func gatePolicy(_ accept: AcceptPolicy, canAsk: Bool) -> ChatGate.Policy {
        switch accept {
        case .ask: canAsk ? .ask : .trusted
        case .all: .all
        case .trusted: .trusted
        case .none: .none
        }
    }

    /// The session's answer to connection requests for the policy in effect.
    static func sessionPolicy(_ policy: ChatGate.Policy) -> FerryStateMachines.AcceptPolicy {
        switch policy {
        case .ask: .ask
        case .all: .all
        case .trusted: .trusted
        case .none: .none
        }
    }
}
