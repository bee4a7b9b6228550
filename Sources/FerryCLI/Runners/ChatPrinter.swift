import FerrySession
import FerryWire

/// Everything `ferry chat` prints: text for people, or one JSON object per line with `--json`.
struct ChatPrinter: Sendable {
    let context: CommandContext
    let json: Bool

    private func emit(_ line: JSONLine, text: @autoclosure () -> String, error: Bool = false) {
        if json {
            context.stdout.writeLine(line.text)
        } else if error {
            context.stderr.writeLine(text())
        } else {
            context.stdout.writeLine(text())
        }
    }

    func ready(session: String, name: String, peerID: PeerID, port: UInt16) {
        emit(
            ["event": "ready", "session": .string(session), "name": .string(name),
             "peerID": .string(peerID.description), "port": .int(Int(port))],
            text: "Chatting in session '\(TerminalText.escape(session))' as '\(TerminalText.escape(name))'"
                + " (port \(port)). Type /help for commands.")
    }

    func state(_ peer: PeerInfo, _ state: PeerState, reason: SessionError?) {
        var line: JSONLine = ["event": .string(state.rawValue), "peer": PeerFormat.json(peer)]
        if let reason { line.append("reason", .string(reason.description)) }
        if case .denied(_, let deny, _)? = reason { line.append("denyReason", .string(deny.description)) }
        let name = PeerFormat.name(peer)
        let text: String
        switch state {
        case .connected: text = "* \(name) joined"
        case .disconnected: text = "* \(name) left" + (reason.map { " (\($0))" } ?? "")
        case .available: text = "* \(name) is here" + (reason.map { " (\($0))" } ?? "")
        case .unavailable: text = "* \(name) is gone"
        case .connecting: text = "* connecting to \(name)"
        }
        emit(line, text: text)
    }

    func message(_ text: String, from peer: PeerInfo, mode: DataMode) {
        emit(
            ["event": "message", "from": .string(peer.displayName), "peerID": .string(peer.peerID.description),
             "mode": .string(mode.rawValue), "text": .string(text)],
            text: "<\(PeerFormat.name(peer))\(mode == .unreliable ? "~" : "")> \(TerminalText.escape(text))")
    }

    func sent(_ text: String, mode: DataMode, count: Int) {
        guard json else { return }  // the terminal already shows what was typed
        context.stdout.writeLine(
            JSONLine(["event": "sent", "mode": .string(mode.rawValue), "peers": .int(count),
                      "bytes": .int(text.utf8.count)]).text)
    }

    func peerRow(_ peer: PeerInfo) {
        emit(["event": "peerInfo", "peer": PeerFormat.json(peer)], text: PeerFormat.row(peer, state: peer.state))
    }

    func notice(_ text: String) {
        emit(["event": "notice", "text": .string(text)], text: text)
    }

    func failure(_ message: String) {
        emit(["event": "error", "message": .string(message)], text: "Error: \(message)", error: true)
    }
}
