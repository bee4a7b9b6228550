import FerrySecurity
import FerrySession
import FerryWire

/// Everything `ferry chat` prints: text for people, or one JSON object per line with `--json`.
///
/// On a terminal (`terminal`), every line is printed above the line being typed, which stays whole below it.
struct ChatPrinter: Sendable {
    let context: CommandContext
    let json: Bool
    /// The terminal the person types on, when stdin and stdout are one.
    var terminal: ChatTerminal? = nil

    func emit(_ line: JSONLine, text: @autoclosure () -> String, error: Bool = false) {
        if json {
            write(line.text, to: context.stdout)
        } else if error {
            // On the screen (stderr a terminal too), an error must not break the typed line either.
            if context.isStderrTerminal, let terminal {
                terminal.printAbove(text() + "\n")
            } else {
                context.stderr.writeLine(text())
            }
        } else {
            write(text(), to: context.stdout)
        }
    }

    private func write(_ line: String, to sink: any TextSink) {
        if let terminal {
            terminal.printAbove(line + "\n")
        } else {
            sink.writeLine(line)
        }
    }

    func ready(session: String, name: String, peerID: PeerID, port: UInt16) {
        emit(
            JSONLine(
                event: JSONEvents.Chat.ready,
                [
                    "session": .string(session), "name": .string(name), "peerID": .string(peerID.description),
                    "port": .int(Int(port)),
                ]),
            text: "Chatting in session '\(TerminalText.escape(session))' as '\(TerminalText.escape(name))'"
                + " (port \(port)). Type /help for commands.")
    }

    func state(_ peer: PeerInfo, _ state: PeerState, reason: SessionError?) {
        var line = JSONLine(event: Self.event(state), ["peer": PeerFormat.json(peer)])
        if let reason { line.append("reason", .string(reason.description)) }
        if case .denied(_, let deny, _)? = reason { line.append("denyReason", .string(deny.description)) }
        if state == .connected {
            line.append("code", peer.pairingCode.map { .string($0) } ?? .null)
            line.append("trusted", .bool(peer.isTrusted))
        }
        let name = PeerFormat.name(peer)
        let text: String
        switch state {
        case .connected: text = "* \(name) joined" + Self.joinAside(peer)
        case .disconnected: text = "* \(name) left" + (reason.map { " (\($0))" } ?? "")
        case .available: text = "* \(name) is here" + (reason.map { " (\($0))" } ?? "")
        case .unavailable: text = "* \(name) is gone"
        case .connecting: text = "* connecting to \(name)"
        }
        emit(line, text: text)
    }

    /// Who joined, as far as this side knows (issue 28, 10): pinned, or a stranger with the device ID and the
    /// link's pairing code to compare with its screen (which shows the same code unless someone is in between).
    /// A pinned peer's line shows the code too, since trust is one-way and the other side may ask about it.
    static func joinAside(_ peer: PeerInfo) -> String {
        let code = peer.pairingCode.map { "pairing code \(PairingCode.readable($0))" }
        if peer.isTrusted {
            return ": trusted, key verified" + (code.map { " (\($0))" } ?? "")
        }
        return ": not trusted, device \(peer.deviceID.shortDescription)"
            + (code.map { ", \($0) (\(PeerFormat.name(peer)) shows the same code unless someone is in between)" } ?? "")
    }

    /// The event of a peer state: its name, as GameKit's states are named.
    static func event(_ state: PeerState) -> JSONEvents.Chat {
        switch state {
        case .available: .available
        case .unavailable: .unavailable
        case .connecting: .connecting
        case .connected: .connected
        case .disconnected: .disconnected
        }
    }

    func message(_ text: String, from peer: PeerInfo, mode: DataMode) {
        emit(
            JSONLine(
                event: JSONEvents.Chat.message,
                [
                    "from": .string(peer.displayName), "peerID": .string(peer.peerID.description),
                    "mode": .string(mode.rawValue), "text": .string(text),
                ]),
            text: "<\(PeerFormat.name(peer))\(mode == .unreliable ? "~" : "")> \(TerminalText.escape(text))")
    }

    func sent(_ text: String, mode: DataMode, count: Int) {
        guard json else { return }  // the terminal already shows what was typed
        write(
            JSONLine(
                event: JSONEvents.Chat.sent,
                ["mode": .string(mode.rawValue), "peers": .int(count), "bytes": .int(text.utf8.count)]
            ).text, to: context.stdout)
    }

    /// The header above `/peers`' rows, as `ferry peers` prints it; nothing in JSON (each row is an object).
    func peerHeader() {
        if !json { write(PeerFormat.header, to: context.stdout) }
    }

    func peerRow(_ peer: PeerInfo) {
        emit(
            JSONLine(event: JSONEvents.Chat.peerInfo, ["peer": PeerFormat.json(peer)]),
            text: PeerFormat.row(peer, state: peer.state))
    }

    func notice(_ text: String) {
        emit(JSONLine(event: JSONEvents.Chat.notice, ["text": .string(text)]), text: text)
    }

    func failure(_ message: String) {
        emit(
            JSONLine(event: JSONEvents.Chat.error, ["message": .string(message)]), text: "Error: \(message)",
            error: true)
    }
}
