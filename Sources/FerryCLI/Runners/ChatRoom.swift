import FerrySession
import FerryStateMachines
import FerryWire
import Synchronization

/// The loops of a chat: session events in, typed lines out, and the `ChatGate` between them that decides who is a
/// member (the events loop, the input loop and the ticking loop all consult it, so it is behind a lock). What the
/// gate decides is printed before the lock is released (`decide`), so the screen shows it in the gate's order; the
/// actions on the session are carried out after.
final class ChatRoom: Sendable {
    private let gate: Mutex<ChatGate>
    let printer: ChatPrinter
    let trustStore: TrustStore
    private let askTimeout: Duration
    /// Peers this chat is dialling (its connect not returned yet), counted against `--max-peers` with the peers the
    /// session reports connected or connecting: two peers seen at once must not both be dialled past the bound.
    private let dialling = Mutex<Set<PeerID>>([])
    /// Peers not dialled because `--max-peers` was reached (connected, connecting and dialling): tried on each tick.
    private let skipped = Mutex<Set<PeerID>>([])

    init(gate: ChatGate, printer: ChatPrinter, trustStore: TrustStore) {
        askTimeout = gate.askTimeout
        self.gate = Mutex(gate)
        self.printer = printer
        self.trustStore = trustStore
    }

    /// The members now: the peers lines go to.
    var members: Set<PeerID> { gate.withLock { $0.members } }

    func events(of session: Session) async {
        for await event in session.events {
            switch event {
            case .peerStateChanged(let peer, let state, let reason):
                guard ChatLoop.shows(peer, state) else { continue }
                await changed(peer, state, reason: reason, session: session)
            case .connectionRequested(let peer):
                let actions = decide { $0.requested(peer, now: .now) }
                await perform(actions, session: session)
            case .dataReceived(let bytes, let peer, let mode):
                let text = String(decoding: bytes, as: UTF8.self)
                let actions = decide { $0.message(text, from: peer, mode: mode) }
                await perform(actions, session: session)
            case .awaitingAnswer(let peer) where ChatLoop.shows(peer, .connecting):
                printer.awaitingAnswer(peer)
            case .awaitingAnswer:
                continue
            case .requestEnded(let peer):
                // It gave up waiting, or the session's decision timeout passed: its question goes.
                let actions = decide { $0.left(peer.peerID, now: .now).actions }
                await perform(actions, session: session)
            case .sessionError(let error):
                printer.failure(error.description)
            case .connectionDenied(let peer, .untrusted, _) where peer.takesMessages:
                printer.refusedUntrusted(peer)  // --accept trusted: its device ID, to pin it
            case .connectionDenied:
                continue  // whom the limits refused: a full or idle session needs no line per peer
            }
        }
    }

    private func changed(_ peer: PeerInfo, _ state: PeerState, reason: SessionError?, session: Session) async {
        switch state {
        case .connected:
            // The join line comes from the gate: a stranger is a question first.
            let actions = decide { $0.connected(peer, now: .now) }
            await perform(actions, session: session)
            return
        case .disconnected:
            let wasMember = gate.withLock { $0.members.contains(peer.peerID) }
            let actions = decide { $0.left(peer.peerID, now: .now).actions }
            await perform(actions, session: session)
            if case .denied(let name, .deniedByUser, let detail)? = reason {
                gate.withLock { $0.notAccepted(by: peer.peerID, now: .now) }
                // Its person (or policy) said no after its link was up: goodbye `notAccepted`. In text that line says
                // it all; scripts also get the member's `disconnected`, as for every member that leaves.
                printer.notAccepted(by: name, detail: detail)
                guard wasMember, printer.json else { return }
            }
            guard wasMember else { return }  // a stranger nobody let in never joined, so it does not leave
        default:
            break
        }
        if state == .available, case .denied(_, let deny, _)? = reason, deny == .deniedByUser || deny == .untrusted {
            // The peer did not let this chat in: back off before this very event dials it again (the failed
            // connect reports it too, later), and on the screen its `did not accept you` line (`connectFailed`)
            // says it once; scripts keep the event with its denyReason.
            gate.withLock { $0.notAccepted(by: peer.peerID, now: .now) }
            if printer.json { printer.state(peer, state, reason: reason) }
            return
        }
        if state == .available, reason != nil {
            // Available again after a failed dial or a lost link: not dialled at once (`ChatGate.dialFailed`).
            gate.withLock { $0.dialFailed(peer.peerID, now: .now) }
        }
        printer.state(peer, state, reason: reason)
        if state == .available { await dial(peer, session: session) }
    }

    /// Dials `peer` if this chat is the side that asks, the gate allows it (not refused, not backing off) and a
    /// member more fits within `--max-peers` (each link this chat opens counts: a stranger it dials is a question).
    private func dial(_ peer: PeerInfo, session: Session) async {
        guard ChatLoop.shouldAsk(peer, session: session), gate.withLock({ $0.mayDial(peer, now: .now) }) else {
            return
        }
        let busy = Set(
            await session.peers().filter { $0.state == .connected || $0.state == .connecting }.map(\.peerID))
        let maxPeers = session.configuration.maxPeers
        let admitted = dialling.withLock { dialling in
            guard !dialling.contains(peer.peerID), busy.union(dialling).count < maxPeers else { return false }
            dialling.insert(peer.peerID)
            return true
        }
        // One skipped for `--max-peers` is dialled on a later tick, when a place is free (`retry`): the other side,
        // with the higher ID, never dials it.
        skipped.withLock { if admitted { $0.remove(peer.peerID) } else { $0.insert(peer.peerID) } }
        guard admitted else { return }
        Task {
            defer { _ = dialling.withLock { $0.remove(peer.peerID) } }
            do {
                try await session.connect(to: peer.peerID, timeout: ChatCommand.connectTimeout)
            } catch {
                self.connectFailed(error, address: nil, peerID: peer.peerID)
            }
        }
    }

    /// Dials again the peers whose back-off ended (`ChatGate.retryAfter`) and are still there.
    private func retry(session: Session) async {
        let waiting = skipped.withLock { $0 }
        for peerID in gate.withLock({ $0.retries(now: .now) }) + waiting {
            guard let peer = await session.peer(peerID), peer.state == .available, peer.takesMessages else {
                skipped.withLock { _ = $0.remove(peerID) }  // gone, or connected meanwhile
                continue
            }
            await dial(peer, session: session)
        }
    }

    /// The trusted-peers file changed (`ferry trust add` in another terminal): a peer pinned now may be dialled
    /// again, and its requests are no longer refused.
    func trustChanged(_ change: TrustFollower.Change, session: Session) async {
        for pinned in change.added {
            gate.withLock { $0.trusted(pinned.deviceID) }
            for peer in await session.peers() where peer.deviceID == pinned.deviceID && peer.state == .available {
                await dial(peer, session: session)
            }
        }
    }

    /// Reports a failed connect (`address`: one the user gave with --peer; `peerID`: the peer dialled). A peer that
    /// did not let this chat in is not dialled again.
    func connectFailed(_ error: any Error, address: String?, peerID: PeerID? = nil) {
        guard let error = error as? SessionError else { return }
        if let peerID, case .denied(_, let reason, _) = error, reason == .deniedByUser || reason == .untrusted {
            gate.withLock { $0.notAccepted(by: peerID, now: .now) }
        }
        switch error {
        case .denied(_, .alreadyConnected, _), .alreadyConnecting: return
        case .denied(let name, .deniedByUser, let detail): printer.notAccepted(by: name, detail: detail)
        // `connectFailed` names the address already ("could not reach 10.0.0.2:4000: ...").
        case .connectFailed: printer.failure(error.description)
        default: printer.failure(address.map { "could not connect to \($0): \(error)" } ?? error.description)
        }
    }

    /// Refuses the stranger whose question nobody answered in time (checked every second).
    func expireQuestions(of session: Session) async {
        while (try? await Task.sleep(for: .seconds(1))) != nil {
            let actions = decide { $0.tick(now: .now) }
            await perform(actions, session: session)
            await retry(session: session)
        }
    }

    /// Runs `body` on the gate and prints what it decided before the lock is released, so that lines reach the
    /// screen in the gate's order whichever task asked (a stranger's held lines after its join line and before the
    /// lines it writes later, which the events loop shows); returns the actions that touch the session, carried out
    /// after the lock is released.
    private func decide(_ body: (inout ChatGate) -> [ChatGate.Action]) -> [ChatGate.Action] {
        decideIfAny(body) ?? []
    }

    /// As `decide`, for a gate call that may decide nothing (nil: a typed line that is no answer).
    private func decideIfAny(_ body: (inout ChatGate) -> [ChatGate.Action]?) -> [ChatGate.Action]? {
        gate.withLock { gate in
            guard let actions = body(&gate) else { return nil }
            var later: [ChatGate.Action] = []
            for action in actions {
                switch action {
                case .ask(let peer): printer.question(peer)
                case .answered(let peer, let answer): printer.answered(peer, answer, askTimeout: askTimeout)
                case .join(let peer): printer.state(peer, .connected, reason: nil)
                case .show(let text, let peer, let mode): printer.message(text, from: peer, mode: mode)
                case .note(let text): printer.notice(text)
                case .accept, .refuse, .pin: later.append(action)
                }
            }
            return later
        }
    }

    private func perform(_ actions: [ChatGate.Action], session: Session) async {
        for action in actions {
            switch action {
            case .accept(let peer, let answer):
                do {
                    try await session.accept(peer.peerID)
                    // Past --max-peers the session denies the request as full instead (no error): then nobody was
                    // let in, and the gate must not keep it admitted (its next link would join unasked).
                    guard await session.peer(peer.peerID)?.state == .connected else {
                        let more = decide { $0.left(peer.peerID, now: .now).actions }
                        printer.notice(
                            "* \(PeerFormat.name(peer)) could not be let in: the chat is full (--max-peers"
                                + " \(session.configuration.maxPeers))")
                        await perform(more, session: session)
                        break
                    }
                    guard answer != nil else { break }
                    await perform(decide { $0.accepted(peer.peerID) }, session: session)
                } catch {
                    // Its request ended before the answer (it gave up waiting): nobody to let in.
                    let more = decide { $0.left(peer.peerID, now: .now).actions }
                    if answer != nil {
                        printer.notice("* the request ended before your answer: ask the peer to try again")
                    }
                    await perform(more, session: session)
                }
            case .refuse(let peer, .request, let detail):
                await session.deny(peer.peerID, reason: .deniedByUser, detail: detail)
                if detail == ChatGate.trustedOnlyDetail { printer.refusedUntrusted(peer) }
            case .refuse(let peer, .dialled, let detail):
                await session.disconnect(peer.peerID, notAccepted: detail)
                if detail == ChatGate.trustedOnlyDetail { printer.refusedUntrusted(peer) }
            case .ask(let peer):
                printer.question(peer)
            case .answered(let peer, let answer):
                printer.answered(peer, answer, askTimeout: askTimeout)
            case .pin(let peer):
                await pin(peer, session: session)
            case .join(let peer):
                printer.state(peer, .connected, reason: nil)
            case .show(let text, let peer, let mode):
                printer.message(text, from: peer, mode: mode)
            case .note(let text):
                printer.notice(text)
            }
        }
    }

    private func pin(_ peer: PeerInfo, session: Session) async {
        do {
            _ = try trustStore.pin(peer.deviceID, name: peer.displayName)
            await session.trust(peer.deviceID, name: peer.displayName)
            gate.withLock { $0.trusted(peer.deviceID) }
        } catch {
            printer.failure("could not trust \(TerminalText.escape(peer.displayName)): \(error)")
        }
    }

    /// Typed lines: an answer to the question on the screen, a command, or a line for every member.
    func input(_ lines: AsyncStream<String>, session: Session) async {
        for await line in lines {
            let answer = decideIfAny { $0.line(line, now: .now) }
            if let answer {
                await perform(answer, session: session)
                continue
            }
            if line == "/quit" { return }
            await ChatLoop.handle(line, session: session, printer: printer, members: members)
            await perform(decide { $0.reminder }, session: session)
        }
        await perform(decide { $0.inputEnded(now: .now) }, session: session)
    }
}
