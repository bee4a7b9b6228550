import FerrySession
import FerryWire

/// Who may speak in `ferry chat`: first contact as for transfers (issue 28, 10).
///
/// In a chat either side may dial (the lower peer ID does), so either side may meet a stranger: as a connection
/// request (this side accepts the link) or as a link this side opened that has just connected. With `--accept ask`
/// both become a question to the person, one at a time in arrival order, answered by the next typed line (y, n or
/// a). Until the answer, a stranger is no member: nothing typed goes to it, and what it writes is held and shown only
/// once the person let it in; a "no" drops it. Pinned peers join without a question; `--accept trusted` refuses
/// every stranger without one, `--accept none` too (it also denies every request, pinned or not).
///
/// Bounds (SECURITY.md "Chat"): at most `maximumQuestions` questions wait (a stranger beyond is refused as busy);
/// of each stranger at most `maximumHeldLines` lines are held, each cut to `heldExcerptBytes`, at most
/// `heldBytesPerStranger` bytes in all, and `heldBytesTotal` across all questions (the rest is counted and said);
/// `refused` keeps at most `maximumRefused` peers (the oldest go).
///
/// Pure: events and lines in, actions out; the time is passed in. The chat room (`ChatRoom`) carries the actions out.
struct ChatGate: Sendable {
    /// The chat's policy once the terminal is known (`ChatCommand.gatePolicy`).
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
        /// Accept the pending request (`Session.accept`); `answer`: the person's (shown, and for `always` the peer
        /// pinned, once the accept succeeded), nil when trust or the policy let it in.
        case accept(PeerInfo, answer: Answer?)
        /// Refuse: deny the pending request, or end the dialled link with goodbye `notAccepted`; `detail` for the
        /// peer.
        case refuse(PeerInfo, Side, detail: String)
        /// Show the question about `peer` (and the prompt on the typed line).
        case ask(PeerInfo)
        /// Show the answer given for `peer` (and take the prompt away).
        case answered(PeerInfo, Answer)
        /// Pin `peer` (answer a to a stranger this chat dialled: trusted from now on).
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
        /// When it was queued: a request waits at most `requestTimeout` in the session.
        var since: ContinuousClock.Instant
        var held: [(text: String, mode: DataMode)] = []
        var heldBytes = 0
        /// Lines not kept (past a bound), and lines kept cut to an excerpt.
        var dropped = 0
        var cut = 0
    }

    /// The detail of a refusal by `--accept trusted` (the peer's screen shows it).
    static let trustedOnlyDetail = "only trusted peers are accepted"
    /// The detail of a refusal by `--accept none`.
    static let noStrangersDetail = "this chat lets no stranger in"
    /// The detail of a refusal because `maximumQuestions` questions wait already.
    static let busyDetail = "too many peers are waiting for an answer; try again later"
    /// Lines of a stranger kept while the person decides; further lines are counted, not kept.
    static let maximumHeldLines = 20
    /// A held line is kept cut to this many bytes (at a character boundary, marked as cut): a line may be 16 MiB.
    static let heldExcerptBytes = 4096
    /// Bytes held of one stranger, and of all strangers being asked about.
    static let heldBytesPerStranger = 64 * 1024
    static let heldBytesTotal = 1024 * 1024
    /// Questions waiting at once; a stranger beyond is refused as busy (`busyDetail`).
    static let maximumQuestions = 16
    /// Peers `refused` remembers; beyond, the oldest refusal is forgotten.
    static let maximumRefused = 1024
    /// How long a peer that did not let this chat in (its deny, its goodbye `notAccepted`, a timeout) is not
    /// dialled again.
    static let retryAfter: Duration = .seconds(60)
    /// A line that arrives sooner than this after a question was shown was typed for what was on the screen before
    /// (as `OfferPrompt.minimumAnswerDelay`): an answer word then is not taken, the person is asked to answer again.
    static let minimumAnswerDelay: Duration = .milliseconds(700)

    let policy: Policy
    /// How long a question waits for its answer before the stranger is refused.
    let askTimeout: Duration
    /// How long the session holds a request undecided (its decision timeout): a request question older is gone.
    let requestTimeout: Duration
    /// The peers that are members: lines go to them, their lines are shown.
    var members: Set<PeerID> { Set(memberDevices.keys) }
    /// The members with the device each was let in as: a peer ID is the peer's claim, the device is proven, so state
    /// is kept for both (another device showing a member's peer ID is no member).
    private var memberDevices: [PeerID: DeviceID] = [:]
    /// Peers this chat refused in this run (a peer ID is new for each run), with their device: never dialled again
    /// and their requests refused without a question, until the device is pinned (`trusted(_:)`). Without it, the
    /// two sides would meet again at once (a peer whose link ends is available again, and the lower ID dials it),
    /// asking or refusing in a tight loop. At most `maximumRefused`, the oldest forgotten first.
    private var refused: [PeerID: (deviceID: DeviceID, order: Int)] = [:]
    private var refusals = 0
    /// Peers that did not let this chat in: not dialled again before the instant.
    private var backOff: [PeerID: ContinuousClock.Instant] = [:]
    /// Dials that failed for another reason than a refusal, by peer: how many in a row, and until when the peer is
    /// not dialled again (nil once `retries` gave it back).
    private var failedDials: [PeerID: (count: Int, until: ContinuousClock.Instant?)] = [:]
    /// Bytes held across all questions.
    private(set) var heldBytes = 0
    /// Requests the person (or trust) accepted, until their link connects.
    private var admitted: [PeerID: DeviceID] = [:]
    /// Requests the person let in, until the room reports the accept succeeded (`accepted(_:)`): the answer's line
    /// (`* you let carol in`) comes only then, and the join line after it even when the link connected first.
    private var accepting: [PeerID: (peer: PeerInfo, answer: Answer, connected: PeerInfo?)] = [:]
    /// Questions in arrival order; the first one is on the screen.
    private var questions: [Question] = []
    private var shownAt: ContinuousClock.Instant?

    init(policy: Policy, askTimeout: Duration, requestTimeout: Duration = .seconds(60)) {
        self.policy = policy
        self.askTimeout = askTimeout
        self.requestTimeout = requestTimeout
    }

    /// Whether this chat refused `peerID` in this run (and its device was not pinned since).
    func isRefused(_ peerID: PeerID) -> Bool {
        refused[peerID] != nil
    }

    /// The peer the question on the screen is about.
    var asking: PeerInfo? { questions.first?.peer }

    /// A connection request (the session's policy is `ask`).
    mutating func requested(_ peer: PeerInfo, now: ContinuousClock.Instant) -> [Action] {
        if isRefused(peer.peerID), !peer.isTrusted {
            return [.refuse(peer, .request, detail: "")]
        }
        if peer.isTrusted || policy != .ask {
            admitted[peer.peerID] = peer.deviceID
            return [.accept(peer, answer: nil)]
        }
        if let index = index(of: peer.peerID) {
            questions[index].side = .request
            return replace(peer, at: index, now: now)
        }
        return enqueue(Question(peer: peer, side: .request, since: now), now: now)
    }

    /// A link to `peer` connected (either side opened it).
    mutating func connected(_ peer: PeerInfo, now: ContinuousClock.Instant) -> [Action] {
        failedDials.removeValue(forKey: peer.peerID)
        if memberDevices[peer.peerID] == peer.deviceID { return [] }
        if accepting[peer.peerID]?.peer.deviceID == peer.deviceID {
            accepting[peer.peerID]?.connected = peer  // joins once its accept is reported (`accepted(_:)`)
            return []
        }
        if peer.isTrusted || admitted.removeValue(forKey: peer.peerID) == peer.deviceID {
            memberDevices[peer.peerID] = peer.deviceID
            return [.join(peer)]
        }
        if isRefused(peer.peerID) {
            return [.refuse(peer, .dialled, detail: "")]
        }
        switch policy {
        case .all:
            memberDevices[peer.peerID] = peer.deviceID
            return [.join(peer)]
        case .trusted, .none:
            remember(refusal: peer)
            return [.refuse(peer, .dialled, detail: policy == .none ? Self.noStrangersDetail : Self.trustedOnlyDetail)]
        case .ask:
            break
        }
        if let index = index(of: peer.peerID) {
            questions[index].side = .dialled
            return replace(peer, at: index, now: now)
        }
        return enqueue(Question(peer: peer, side: .dialled, since: now), now: now)
    }

    /// The question at `index` is about `peer` as it is now; when what the person compares changed (its name, its
    /// device, its code), the question on the screen is shown again, and an answer typed before is not taken.
    private mutating func replace(_ peer: PeerInfo, at index: Int, now: ContinuousClock.Instant) -> [Action] {
        let old = questions[index].peer
        questions[index].peer = peer
        let changed =
            old.displayName != peer.displayName || old.deviceID != peer.deviceID || old.pairingCode != peer.pairingCode
        guard changed, index == 0 else { return [] }
        return showNext(now: now)
    }

    /// A line `peer` wrote: shown for a member, held for a stranger being asked about, dropped otherwise.
    mutating func message(_ text: String, from peer: PeerInfo, mode: DataMode) -> [Action] {
        if memberDevices[peer.peerID] == peer.deviceID { return [.show(text, from: peer, mode: mode)] }
        guard let index = index(of: peer.peerID), questions[index].peer.deviceID == peer.deviceID else { return [] }
        let (excerpt, wasCut) = Self.excerpt(text)
        let size = excerpt.utf8.count
        if questions[index].held.count < Self.maximumHeldLines,
            questions[index].heldBytes + size <= Self.heldBytesPerStranger, heldBytes + size <= Self.heldBytesTotal
        {
            questions[index].held.append((excerpt, mode))
            questions[index].heldBytes += size
            heldBytes += size
            if wasCut { questions[index].cut += 1 }
        } else {
            questions[index].dropped += 1
        }
        return []
    }

    /// `text` cut to `heldExcerptBytes` at a character boundary, marked as cut; whether it was cut.
    static func excerpt(_ text: String) -> (String, Bool) {
        let limit = heldExcerptBytes - 32  // room for the mark
        guard text.utf8.count > heldExcerptBytes else { return (text, false) }
        var end = text.startIndex
        var bytes = 0
        while end < text.endIndex {
            let next = text.index(after: end)
            let size = text.utf8.distance(from: end, to: next)
            if bytes + size > limit { break }
            bytes += size
            end = next
        }
        return (String(text[..<end]) + " [cut: \(text.utf8.count) bytes]", true)
    }

    /// `peer`'s link ended, or its request went away. Returns whether it was a member (its leaving is news).
    mutating func left(_ peerID: PeerID, now: ContinuousClock.Instant) -> (wasMember: Bool, actions: [Action]) {
        admitted.removeValue(forKey: peerID)
        accepting.removeValue(forKey: peerID)
        if memberDevices.removeValue(forKey: peerID) != nil { return (true, []) }
        guard let index = index(of: peerID) else { return (false, []) }
        let question = questions.remove(at: index)
        heldBytes -= question.heldBytes
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

    /// Refuses the stranger whose question waited `askTimeout`, and drops the questions about requests older than
    /// `requestTimeout` (the session denied them: nobody is left to let in).
    mutating func tick(now: ContinuousClock.Instant) -> [Action] {
        var actions: [Action] = []
        if let shownAt, !questions.isEmpty, now - shownAt >= askTimeout {
            actions += settle(.expired, now: now)
        }
        while let index = questions.firstIndex(where: { $0.side == .request && now - $0.since >= requestTimeout }) {
            actions += left(questions[index].peer.peerID, now: now).actions
        }
        return actions
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
        heldBytes -= question.heldBytes
        shownAt = nil
        var actions: [Action] = []
        var answer = answer
        if answer == .always, question.peer.pairingCode == nil {
            answer = .accept  // trusting from now on means a code was compared: without one, this once only
        }
        switch answer {
        case .accept, .always:
            switch question.side {
            case .request:
                // "you let carol in" (and the pin) once the accept succeeded: the request may have ended meanwhile.
                accepting[question.peer.peerID] = (question.peer, answer, nil)
                actions.append(.accept(question.peer, answer: answer))
            case .dialled:
                actions.append(.answered(question.peer, answer))
                if answer == .always {
                    actions.append(.pin(question.peer))
                    question.peer.isTrusted = true
                }
                memberDevices[question.peer.peerID] = question.peer.deviceID
                actions.append(.join(question.peer))
                actions += question.held.map { .show($0.text, from: question.peer, mode: $0.mode) }
                let name = TerminalText.escape(question.peer.displayName)
                if question.dropped > 0 {
                    actions.append(
                        .note("\(question.dropped) more lines \(name) wrote before you answered were not kept"))
                }
                if question.cut > 0 {
                    actions.append(
                        .note(
                            "\(question.cut) of the lines \(name) wrote before you answered were cut to"
                                + " \(Self.heldExcerptBytes) bytes"))
                }
            }
        case .deny, .expired, .gone:
            actions.append(.answered(question.peer, answer))
            remember(refusal: question.peer)
            let detail = answer == .expired ? "nobody answered in time" : ""
            actions.append(.refuse(question.peer, question.side, detail: detail))
        }
        if next { actions += showNext(now: now) }
        return actions
    }

    /// The accept of `peerID`'s request, which the person let in, succeeded: the answer's line, the pin for `a`,
    /// and the join line if its link connected meanwhile (else it joins when it connects).
    mutating func accepted(_ peerID: PeerID) -> [Action] {
        guard let pending = accepting.removeValue(forKey: peerID) else { return [] }
        var actions: [Action] = [.answered(pending.peer, pending.answer)]
        if pending.answer == .always { actions.append(.pin(pending.peer)) }
        if let connected = pending.connected {
            memberDevices[peerID] = connected.deviceID
            actions.append(.join(connected))
        } else {
            admitted[peerID] = pending.peer.deviceID
        }
        return actions
    }

    /// `peerID` did not accept this chat (its deny, its goodbye `notAccepted`, or no answer in time): it is not
    /// dialled again for `retryAfter` (its person may pin this chat meanwhile).
    mutating func notAccepted(by peerID: PeerID, now: ContinuousClock.Instant) {
        backOff[peerID] = now + Self.retryAfter
        if backOff.count > Self.maximumRefused, let oldest = backOff.min(by: { $0.value < $1.value })?.key {
            backOff.removeValue(forKey: oldest)
        }
    }

    /// A dial of `peerID` failed for another reason than a refusal (a full server, the peer's rate limit, a refused
    /// or timed-out connection, a changed key): a failed connect makes the peer available again, which would dial it
    /// at once, in a loop with a handshake and a line each time. It waits 2, 4, 8 ... s, at most `retryAfter`, pinned
    /// peers too; a peer that joins starts again from nothing (`connected`).
    mutating func dialFailed(_ peerID: PeerID, now: ContinuousClock.Instant) {
        let count = (failedDials[peerID]?.count ?? 0) + 1
        let wait = min(Self.retryAfter, .seconds(1 << min(count, 6)))
        failedDials[peerID] = (count, now + wait)
        if failedDials.count > Self.maximumRefused,
            let oldest = failedDials.min(by: { ($0.value.until ?? now) < ($1.value.until ?? now) })?.key
        {
            failedDials.removeValue(forKey: oldest)
        }
    }

    /// The peers whose back-off ended at `now`, to dial again (each once).
    mutating func retries(now: ContinuousClock.Instant) -> [PeerID] {
        var due = backOff.filter { now >= $0.value }.map(\.key)
        for peerID in due { backOff.removeValue(forKey: peerID) }
        for (peerID, failed) in failedDials {
            guard let until = failed.until, now >= until else { continue }
            failedDials[peerID]?.until = nil
            if !due.contains(peerID) { due.append(peerID) }
        }
        return due
    }

    /// `deviceID` was pinned (here, or in the trusted-peers file): its refusals are forgotten.
    mutating func trusted(_ deviceID: DeviceID) {
        refused = refused.filter { $0.value.deviceID != deviceID }
    }

    /// Whether the chat may dial `peer` when it sees it: a pinned peer always; not a peer this chat refused, nor one
    /// that did not let this chat in within `retryAfter`.
    func mayDial(_ peer: PeerInfo, now: ContinuousClock.Instant) -> Bool {
        if let until = failedDials[peer.peerID]?.until, now < until { return false }
        if peer.isTrusted { return true }
        if isRefused(peer.peerID) { return false }
        return backOff[peer.peerID].map { now >= $0 } ?? true
    }

    private mutating func remember(refusal peer: PeerInfo) {
        refusals += 1
        refused[peer.peerID] = (peer.deviceID, refusals)
        if refused.count > Self.maximumRefused, let oldest = refused.min(by: { $0.value.order < $1.value.order })?.key {
            refused.removeValue(forKey: oldest)
        }
    }

    private mutating func enqueue(_ question: Question, now: ContinuousClock.Instant) -> [Action] {
        guard questions.count < Self.maximumQuestions else {
            return [.refuse(question.peer, question.side, detail: Self.busyDetail)]
        }
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
