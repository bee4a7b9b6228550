import FerrySession
import FerryStateMachines
import FerryWire

extension ChatCommand {
    /// The chat: connects to every peer it discovers (the lower peer ID asks, so two peers ask once), accepts
    /// or denies requests by policy, sends each typed line to every connected peer, and prints what arrives.
    public func run(context: CommandContext) async throws -> ExitCode {
        let sessionMode: PeerMode =
            switch mode {
            case .server: .server
            case .client: .client
            case .peer: .peer
            }
        let setup = try SessionSetup(
            global: global, context: context, mode: sessionMode, acceptPolicy: Self.sessionPolicy(accept),
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
        try await setup.run { [printer] session in
            printer.ready(
                session: session.configuration.sessionID, name: session.configuration.displayName,
                peerID: session.localPeerID, port: await session.listenPort)
            await withTaskGroup(of: Void.self) { group in
                group.addTask {
                    await ChatLoop.events(of: session, printer: printer)
                }
                for address in setup.manualPeers {
                    group.addTask {
                        do {
                            try await session.connect(toAddress: address, timeout: .seconds(10))
                        } catch {
                            // The chat ended (end of input, /quit) before the connection was made: nothing failed.
                            if Task.isCancelled { return }
                            // `connectFailed` names the address already ("could not reach 10.0.0.2:4000: ...").
                            if case .connectFailed? = error as? SessionError {
                                printer.failure("\(error)")
                            } else {
                                printer.failure("could not connect to \(address): \(error)")
                            }
                        }
                    }
                }
                // The input loop ends the chat: at /quit or end of input (or Ctrl-C, which cancels us).
                await ChatLoop.input(input, session: session, printer: printer)
                group.cancelAll()
            }
            await session.disconnectAll()
        }
        if Task.isCancelled { throw CancellationError() }
        return .success
    }
}

/// The two loops of a chat: session events in, typed lines out.
enum ChatLoop {
    static func events(of session: Session, printer: ChatPrinter) async {
        for await event in session.events {
            switch event {
            case .peerStateChanged(let peer, let state, let reason):
                guard shows(peer, state) else { continue }
                printer.state(peer, state, reason: reason)
                if state == .available, shouldAsk(peer, session: session) {
                    Task {
                        do {
                            try await session.connect(to: peer.peerID, timeout: .seconds(10))
                        } catch let error as SessionError {
                            if case .denied(_, .alreadyConnected, _) = error { return }
                            if case .alreadyConnecting = error { return }
                            printer.failure(error.description)
                        } catch {}
                    }
                }
            case .connectionRequested(let peer):
                // Policy `ask` is not offered by chat; a request reaching here is answered at once.
                try? await session.accept(peer.peerID)
            case .dataReceived(let bytes, let peer, let mode):
                printer.message(String(decoding: bytes, as: UTF8.self), from: peer, mode: mode)
            case .sessionError(let error):
                printer.failure(error.description)
            case .connectionDenied:
                continue  // chat takes everyone its limits allow; a full or idle session needs no line per peer
            }
        }
    }

    /// Whether a peer's state change is news for the chat. A peer that only transfers files (`ferry receive`, a
    /// sender passing by) is no member of the chat: never announced, asked or written to; nor is a swarm link's
    /// coming and going (a link between receivers of a broadcast, PeerInfo+SwarmLink).
    static func shows(_ peer: PeerInfo, _ state: PeerState) -> Bool {
        peer.takesMessages && !peer.isSwarmLinkChange(to: state)
    }

    /// Who asks whom: a client asks everyone it sees, a server no one, and of two peers the lower ID asks.
    /// A server that announces it is full is still asked once, so that the user reads why it is not joining
    /// (its answer names the reason); it is asked again when its announcement changes.
    static func shouldAsk(_ peer: PeerInfo, session: Session) -> Bool {
        switch session.configuration.mode {
        case .server: return false
        case .client: return true
        case .peer: return peer.mode == .server || session.localPeerID < peer.peerID
        }
    }

    /// What `/help` prints: the commands, and how a line that came as a datagram is marked.
    static let helpLines = [
        "commands: /peers lists the peers, /unreliable TEXT sends TEXT as a datagram, /quit leaves;"
            + " other lines go to every connected peer",
        "a ~ after the sender's name, as in <bob~> hi, marks a line that came as a datagram"
            + " (sent with /unreliable: it may be lost or arrive out of order)",
    ]

    static func input(_ lines: AsyncStream<String>, session: Session, printer: ChatPrinter) async {
        for await line in lines {
            if line == "/quit" { return }
            if line == "/peers" {
                let members = await session.peers().filter { $0.takesMessages && !$0.isConnectedBySwarmLink }
                if !members.isEmpty { printer.peerHeader() }
                for peer in members { printer.peerRow(peer) }
                continue
            }
            if line == "/help" {
                // One notice (two lines of text): scripts read the answer to /help as one event.
                printer.notice(helpLines.joined(separator: "\n"))
                continue
            }
            var text = line
            var mode = DataMode.reliable
            if line.hasPrefix("/unreliable ") {
                text = String(line.dropFirst("/unreliable ".count))
                mode = .unreliable
            } else if line.hasPrefix("/") {
                printer.failure("unknown command \(TerminalText.excerpt(line)); type /help for the commands")
                continue
            }
            do {
                let connected = await session.peers(withState: .connected).filter {
                    $0.takesMessages && !$0.isSwarmLink
                }
                if connected.isEmpty {
                    printer.failure("no peer is connected yet; the line was not sent")
                    continue
                }
                try await session.send(Array(text.utf8), to: connected.map(\.peerID), mode: mode)
                printer.sent(text, mode: mode, count: connected.count)
            } catch let error as SessionError {
                printer.failure(error.description)
            } catch {
                return
            }
        }
    }
}

extension ChatCommand {
    /// The session's answer to connection requests for `--accept`.
    static func sessionPolicy(_ accept: AcceptPolicy) -> FerryStateMachines.AcceptPolicy {
        switch accept {
        case .all: .all
        case .trusted: .trusted
        case .none: .none
        }
    }
}
