import FerrySession
import FerryStateMachines
import FerryWire

/// What a chat does with peers and lines, apart from who may join (`ChatRoom`, `ChatGate`).
enum ChatLoop {
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

    /// One typed line other than `/quit`: a command, or a line for every member (`members`: the peers let in).
    static func handle(_ line: String, session: Session, printer: ChatPrinter, members: Set<PeerID>) async {
        if line == "/peers" {
            let peers = await session.peers().filter { $0.takesMessages && !$0.isConnectedBySwarmLink }
            if !peers.isEmpty { printer.peerHeader() }
            for peer in peers { printer.peerRow(peer) }
            return
        }
        if line == "/help" {
            // One notice (two lines of text): scripts read the answer to /help as one event.
            printer.notice(helpLines.joined(separator: "\n"))
            return
        }
        var text = line
        var mode = DataMode.reliable
        if line.hasPrefix("/unreliable ") {
            text = String(line.dropFirst("/unreliable ".count))
            mode = .unreliable
        } else if line.hasPrefix("/") {
            printer.failure("unknown command \(TerminalText.excerpt(line)); type /help for the commands")
            return
        }
        do {
            // A stranger still being asked about is connected but no member: nothing typed goes to it.
            let connected = await session.peers(withState: .connected).filter {
                $0.takesMessages && !$0.isSwarmLink && members.contains($0.peerID)
            }
            if connected.isEmpty {
                printer.failure("no peer is connected yet; the line was not sent")
                return
            }
            try await session.send(Array(text.utf8), to: connected.map(\.peerID), mode: mode)
            printer.sent(text, mode: mode, count: connected.count)
        } catch {
            printer.failure("\(error)")
        }
    }
}
