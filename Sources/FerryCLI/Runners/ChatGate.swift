import FerrySession
import FerryWire

/// Who may speak in `ferry chat`: first contact as for transfers (issue 28, 10).
///
/// In a chat either side may dial (the lower peer ID does), so either side may meet a stranger: as a connection
/// request (this side accepts the link) or as a link this side opened that has just connected. With `--accept ask`
/// both become a question to the person, one at a time in arrival order, answered by the next typed line (y, n or
/// a). Until the answer, a stranger is no member: nothing typed goes to it, and what it writes is held (at most
/// `maximumHeldLines`, the rest counted) and shown only once the person let it in; a "no" drops it. Pinned peers
/// join without a question; `--accept trusted` refuses every stranger without one.
///
/// Pure: events and lines in, actions out; the time is passed in. The chat loop (`ChatLoop`) carries the actions out.
struct ChatGate: Sendable {
    /// The chat's policy once the terminal is known (`ChatCommand.effectiveAccept`).
    enum Policy: Sendable, Equatable {
        case ask, trusted, all, none
    }

    /// How the stranger came: its request waits for an accept or deny, or this side dialled it and is connected.
    enum Side: Sendable, Equatable {
        case request
        case dialled
    }

    /// What the person answered (or what answered for them).
    enum Answer: String, Sendable, Equatable {
        case accept, deny, always
        /// Nobody answered within `askTimeout`.
        case expired
        /// The stranger went away before the answer.
        case gone
    }

    /// What the chat loop does.
    enum Action: Sendable, Equatable {
        /// Accept the pending request (`Session.accept`).
        case accept(PeerID)
        /// Refuse: deny the pending request, or end the dialled link with goodbye `notAccepted`; `detail` for the
        /// peer.
        case refuse(PeerInfo, Side, detail: String)
        /// Show the question about `peer` (and the prompt on the typed line).
        case ask(PeerInfo)
        /// Show the answer given for `peer` (and take the prompt away).
        case answered(PeerInfo, Answer)
        /// Pin `peer` (answer a: trusted from now on).
        case pin(PeerInfo)
        /// Print `peer`'s join line.
        case join(PeerInfo)
        /// Print a line `peer` wrote.
        case show(String, from: PeerInfo, mode: DataMode)
        /// Print a notice for the person.
        case note(String)
    }

    private struct Question: Sendable {
        var peer: PeerInfo
        var side: Side
        var held: [(text: String, mode: DataMode)] = []
        var dropped = 0
    }

    /// The detail of a refusal by `--accept trusted` (the peer's screen shows it).
    static let trustedOnlyDetail = "only trusted peers are accepted"
    /// Lines of a stranger kept while the person decides; further lines are counted, not kept.
    static let maximumHeldLines = 20
    /// A line that arrives sooner than this after a question was shown was typed for what was on the screen before
    /// (as `OfferPrompt.minimumAnswerDelay`): an answer word then is not taken, the person is asked to answer again.
    static let minimumAnswerDelay: Duration = .milliseconds(700)

    let policy: Policy
    /// How long a question waits for its answer before the stranger is refused.
    let askTimeout: Duration
    /// The peers that are members: lines go to them, their lines are shown.
    private(set) var members: Set<PeerID> = []
    /// Peers this chat refused, or that did not accept it, in this run (a peer ID is new for each run): never dialled
    /// again, and their requests are refused without a question. Without it, the two sides would meet again at once
    /// (a peer whose link ends is available again, and the lower ID dials it), asking or refusing in a tight loop.
    private(set) var refused: Set<PeerID> = []
    /// Requests the person (or trust) accepted, until their link connects.
    private var admitted: Set<PeerID> = []
    /// Questions in arrival order; the first one is on the screen.
    private var questions: [Question] = []
    private var shownAt: ContinuousClock.Instant?

    init(policy: Policy, askTimeout: Duration) {
        self.policy = policy
        self.askTimeout = askTimeout
    }

    /// The peer the question on the screen is about.
    var asking: PeerInfo? { questions.first?.peer }

    /// A connection request (the session's policy is `ask`).
    mutating func requested(_ peer: PeerInfo, now: ContinuousClock.Instant) -> [Action] {
        if refused.contains(peer.peerID), !peer.isTrusted {
            return [.refuse(peer, .request, detail: "")]
        }
        if peer.isTrusted || policy != .ask {
            admitted.insert(peer.peerID)
            return [.accept(peer.peerID)]
        }
        if let index = index(of: peer.peerID) {
            questions[index].peer = peer
            return []
        }
        return enqueue(Question(peer: peer, side: .request), now: now)
    }

    /// A link to `peer` connected (either side opened it).
    mutating func connected(_ peer: PeerInfo, now: ContinuousClock.Instant) -> [Action] {
        if members.contains(peer.peerID) { return [] }
        if peer.isTrusted || policy == .all || policy == .none || admitted.remove(peer.peerID) != nil {
            members.insert(peer.peerID)
            return [.join(peer)]
        }
        if policy == .trusted {
            refused.insert(peer.peerID)
            return [.refuse(peer, .dialled, detail: Self.trustedOnlyDetail)]
        }
        if let index = index(of: peer.peerID) {
            questions[index].peer = peer
            questions[index].side = .dialled
            return []
        }
        return enqueue(Question(peer: peer, side: .dialled), now: now)
    }

    /// A line `peer` wrote: shown for a member, held for a stranger being asked about, dropped otherwise.
    mutating func message(_ text: String, from peer: PeerInfo, mode: DataMode) -> [Action] {
        if members.contains(peer.peerID) { return [.show(text, from: peer, mode: mode)] }
        guard let index = index(of: peer.peerID) else { return [] }
        if questions[index].held.count < Self.maximumHeldLines {
            questions[index].held.append((text, mode))
        } else {
            questions[index].dropped += 1
        }
        return []
    }

    /// `peer`'s link ended, or its request went away. Returns whether it was a member (its leaving is news).
    mutating func left(_ peerID: PeerID, now: ContinuousClock.Instant) -> (wasMember: Bool, actions: [Action]) {
        admitted.remove(peerID)
        if members.remove(peerID) != nil { return (true, []) }
        guard let index = index(of: peerID) else { return (false, []) }
        let question = questions.remove(at: index)
        var actions: [Action] = [.answered(question.peer, .gone)]
        if index == 0 { actions += showNext(now: now) }
        return (false, actions)
    }

    /// A typed line: the answer to the question on the screen, or nil when it is no answer (the caller sends it as
    /// usual; the question is shown again, so that the person sees it waits).
    mutating func line(_ line: String, now: ContinuousClock.Instant) -> [Action]? {
        guard let question = questions.first else { return nil }
        let answer: Answer
        switch line.trimmingSpaces.lowercased() {
        case "y", "yes": answer = .accept
        case "n", "no": answer = .deny
        case "a", "always": answer = .always
        default: return nil
        }
        if let shownAt, now - shownAt < Self.minimumAnswerDelay {
            return [
                .note("(ignored an answer typed before the question was shown: answer again)"), .ask(question.peer),
            ]
        }
        return settle(answer, now: now)
    }

    /// After a line that was no answer: a reminder that the question on the screen waits.
    var reminder: [Action] {
        questions.first.map {
            [.note("(still waiting for your answer: let \(TerminalText.escape($0.peer.displayName)) in? y, n or a)")]
        } ?? []
    }

    /// Refuses the stranger whose question waited `askTimeout`.
    mutating func tick(now: ContinuousClock.Instant) -> [Action] {
        guard let shownAt, !questions.isEmpty, now - shownAt >= askTimeout else { return [] }
        return settle(.expired, now: now)
    }

    /// Nobody can answer any more (end of input): every stranger waiting is refused.
    mutating func inputEnded(now: ContinuousClock.Instant) -> [Action] {
        var actions: [Action] = []
        while !questions.isEmpty {
            actions += settle(.deny, now: now, next: false)
        }
        return actions
    }

    private mutating func settle(_ answer: Answer, now: ContinuousClock.Instant, next: Bool = true) -> [Action] {
        var question = questions.removeFirst()
        shownAt = nil
        var actions: [Action] = []
        var answer = answer
        if answer == .always, question.peer.pairingCode == nil {
            answer = .accept  // trusting from now on means a code was compared: without one, this once only
        }
        actions.append(.answered(question.peer, answer))
        switch answer {
        case .accept, .always:
            if answer == .always {
                actions.append(.pin(question.peer))
                question.peer.isTrusted = true
            }
            switch question.side {
            case .request:
                admitted.insert(question.peer.peerID)
                actions.append(.accept(question.peer.peerID))
            case .dialled:
                members.insert(question.peer.peerID)
                actions.append(.join(question.peer))
                actions += question.held.map { .show($0.text, from: question.peer, mode: $0.mode) }
                if question.dropped > 0 {
                    actions.append(
                        .note(
                            "\(question.dropped) more lines \(TerminalText.escape(question.peer.displayName)) wrote"
                                + " before you answered were not kept"))
                }
            }
        case .deny, .expired, .gone:
            refused.insert(question.peer.peerID)
            let detail = answer == .expired ? "nobody answered in time" : ""
            actions.append(.refuse(question.peer, question.side, detail: detail))
        }
        if next { actions += showNext(now: now) }
        return actions
    }

    /// `peerID` did not accept this chat (its deny, or its goodbye `notAccepted`): it is not dialled again.
    mutating func notAccepted(by peerID: PeerID) {
        refused.insert(peerID)
    }

    /// Whether the chat may dial `peerID` when it sees it: not when one side refused the other in this run.
    func mayDial(_ peerID: PeerID) -> Bool {
        !refused.contains(peerID)
    }

    private mutating func enqueue(_ question: Question, now: ContinuousClock.Instant) -> [Action] {
        questions.append(question)
        return questions.count == 1 ? showNext(now: now) : []
    }

    private mutating func showNext(now: ContinuousClock.Instant) -> [Action] {
        guard let first = questions.first else {
            shownAt = nil
            return []
        }
        shownAt = now
        return [.ask(first.peer)]
    }

    private func index(of peerID: PeerID) -> Int? {
        questions.firstIndex { $0.peer.peerID == peerID }
    }
}
