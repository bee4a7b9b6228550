import FerrySecurity
import FerrySession
import FerryWire

/// What `ferry chat` prints about first contact (`ChatGate`): the question about a stranger, its answer, and a
/// refusal by the other side.
extension ChatPrinter {
    /// The question, and on a terminal the prompt before the typed line:
    ///
    /// ```
    /// ? carol wants to chat: not trusted, device ABCD-EFGH, pairing code 461 214 (carol shows the same code unless
    ///   someone is in between)
    /// ? Let carol in? [y]es, [n]o, [a]lways (trust carol from now on); other lines are sent as usual
    /// carol? [y/n/a] _
    /// ```
    func question(_ peer: PeerInfo) {
        let name = PeerFormat.name(peer)
        let code =
            peer.pairingCode.map {
                "pairing code \(PairingCode.readable($0)) (\(name) shows the same code unless someone is in between)"
            } ?? "no pairing code (its link has none to compare)"
        var line = JSONLine(event: JSONEvents.Chat.question, ["peer": PeerFormat.json(peer)])
        line.append("code", peer.pairingCode.map { .string($0) } ?? .null)
        line.append("trusted", .bool(peer.isTrusted))
        emit(
            line,
            text: "? \(name) wants to chat: not trusted, device \(peer.deviceID.shortDescription), \(code)\n"
                + "? Let \(name) in? [y]es, [n]o, [a]lways (trust \(name) from now on);"
                + " other lines are sent as usual")
        terminal?.setPrompt("\(name)? [y/n/a] ")
    }

    /// This side dialled `peer` and knows the link's pairing code before `peer` answers: the person reads it while
    /// `peer`'s person may be comparing it (`* waiting for bob to let you in: pairing code 123 456 (...)`). In JSON
    /// a second `connecting` event, with `code`.
    func awaitingAnswer(_ peer: PeerInfo) {
        let name = PeerFormat.name(peer)
        var line = JSONLine(event: JSONEvents.Chat.connecting, ["peer": PeerFormat.json(peer)])
        line.append("code", peer.pairingCode.map { .string($0) } ?? .null)
        let code =
            peer.pairingCode.map {
                "pairing code \(PairingCode.readable($0)) (if \(name) is asked, it shows the same code unless someone"
                    + " is in between)"
            } ?? "no pairing code (its link has none to compare)"
        emit(line, text: "* waiting for \(name) to let you in: \(code)")
    }

    /// The answer given for `peer`; the prompt goes (the next question, if any, sets its own).
    func answered(_ peer: PeerInfo, _ answer: ChatGate.Answer, askTimeout: Duration) {
        let name = PeerFormat.name(peer)
        let text: String
        switch answer {
        case .accept: text = "* you let \(name) in"
        case .always: text = "* you let \(name) in; \(name) is trusted from now on (ferry trust list)"
        case .deny: text = "* you did not let \(name) in"
        case .expired: text = "* nobody answered within \(askTimeout.secondsText): \(name) was not let in"
        case .gone: text = "* \(name) left before you answered"
        }
        terminal?.setPrompt("")
        emit(
            JSONLine(
                event: JSONEvents.Chat.answer, ["peer": PeerFormat.json(peer), "answer": .string(answer.rawValue)]),
            text: text)
    }

    /// This side refused a stranger without asking (`--accept trusted`, or this side dialled it); its device ID
    /// is named so that it can be pinned.
    func refusedUntrusted(_ peer: PeerInfo) {
        notice(
            "* refused \(PeerFormat.name(peer)): not trusted (device \(peer.deviceID.shortDescription)); to chat"
                + " with it, pin it with 'ferry trust add \(peer.deviceID)' or use --accept ask")
    }

    /// The other side's person (or policy) did not let this side in: `carol did not accept you into the chat`.
    func notAccepted(by peer: String, detail: String) {
        let text =
            "\(TerminalText.escape(peer)) did not accept you into the chat"
            + (detail.isEmpty ? "" : " (\(TerminalText.escape(detail)))")
        emit(JSONLine(event: JSONEvents.Chat.error, ["message": .string(text)]), text: "* " + text)
    }
}

extension Duration {
    /// "60 s"
    fileprivate var secondsText: String {
        "\(components.seconds) s"
    }
}
