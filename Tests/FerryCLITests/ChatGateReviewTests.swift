import FerryWire
import Testing

@testable import FerryCLI
@testable import FerrySession

/// Issue 28, 10, the review of the first-contact gate: what a stranger may make this chat hold, who `--accept none`
/// lets in, a question whose peer changed, a refused peer's later links, the question queue's bound.
@Suite struct ChatGateReviewTests {
    typealias T = ChatGateTests

    /// H2: a held line could be 16 MiB (`Limits.maxMessageSize`), twenty of them per stranger (432 MB measured).
    @Test func aStrangersHeldLinesAreExcerptsWithinAByteBudget() {
        var gate = T.gate()
        _ = gate.connected(T.carol, now: T.start)
        let huge = String(repeating: "x", count: 1 << 20)
        for _ in 0..<20 { _ = gate.message(huge, from: T.carol, mode: .reliable) }
        let actions = gate.line("y", now: T.later) ?? []
        let shown = actions.compactMap { if case .show(let text, _, _) = $0 { text } else { nil } }
        #expect(!shown.isEmpty)
        #expect(shown.allSatisfy { $0.utf8.count <= 4096 + 64 }, "\(shown.map(\.utf8.count))")
        #expect(shown.reduce(0) { $0 + $1.utf8.count } <= 64 * 1024 + 20 * 64, "\(shown.map(\.utf8.count))")
        #expect(actions.contains { if case .note(let text) = $0 { text.contains("not kept") } else { false } })
    }

    /// M1: `--accept none` denies every request; a stranger this chat dialled was let in without a question.
    @Test func noneRefusesADialledStrangerAsItRefusesARequestingOne() {
        var gate = T.gate(.none)
        let actions = gate.connected(T.carol, now: T.start)
        #expect(actions.count == 1 && { if case .refuse(T.carol, .dialled, _) = actions[0] { true } else { false } }())
        #expect(!gate.members.contains(T.carol.peerID))
        #expect(gate.connected(T.alice, now: T.start) == [.join(T.alice)])
    }

    /// M4: the question on the screen is about the peer as it was; when its name or code changes it is asked again.
    @Test func aQuestionWhosePeerShowsAnotherCodeIsAskedAgain() {
        var gate = T.gate()
        _ = gate.connected(T.carol, now: T.start)
        let recoded = T.peer("carol", id: 3, code: "999999")
        let actions = gate.requested(recoded, now: T.later)
        #expect(actions.contains(.ask(recoded)), "\(actions)")
        // An answer typed as the new question appears is not taken.
        let early = gate.line("y", now: T.later + .milliseconds(100)) ?? []
        #expect(!early.contains(.join(recoded)), "\(early)")
    }

    /// M4: a new link of a peer this chat refused is refused, not asked about again.
    @Test func aRefusedPeersNextLinkIsRefusedWithoutAQuestion() {
        var gate = T.gate()
        _ = gate.connected(T.carol, now: T.start)
        _ = gate.line("n", now: T.later)
        let again = gate.connected(T.carol, now: T.later)
        #expect(again.count == 1 && { if case .refuse(T.carol, .dialled, _) = again[0] { true } else { false } }())
        #expect(gate.asking == nil)
    }

    /// M3: the queue of questions is bounded; a stranger beyond it is refused as busy.
    @Test func questionsBeyondTheQueuesBoundAreRefusedAsBusy() {
        var gate = T.gate()
        for id in 10..<(10 + 16) {
            _ = gate.requested(T.peer("p\(id)", id: UInt64(id)), now: T.start)
        }
        let extra = T.peer("extra", id: 99)
        let actions = gate.requested(extra, now: T.start)
        #expect(actions.count == 1 && { if case .refuse(extra, .request, _) = actions[0] { true } else { false } }())
    }
}

extension ChatGateReviewTests {
    /// H2: across all questions at most `heldBytesTotal` bytes are held.
    @Test func heldBytesAcrossAllQuestionsStayWithinTheTotal() {
        var gate = T.gate()
        let line = String(repeating: "é", count: 1 << 19)  // 1 MiB of two-byte characters
        for id in 10..<(10 + ChatGate.maximumQuestions) {
            let peer = T.peer("p\(id)", id: UInt64(id))
            _ = gate.connected(peer, now: T.start)
            for _ in 0..<30 { _ = gate.message(line, from: peer, mode: .reliable) }
            #expect(gate.heldBytes <= ChatGate.heldBytesTotal)
        }
        #expect(gate.heldBytes > ChatGate.heldBytesTotal / 2)
        let (excerpt, cut) = ChatGate.excerpt(line)
        #expect(cut && excerpt.utf8.count <= ChatGate.heldExcerptBytes && excerpt.hasPrefix("éé"))
        #expect(ChatGate.excerpt("short") == ("short", false))
    }

    /// M2: a refusal is forgotten once the peer is pinned; a peer that did not let this chat in is tried again
    /// after `retryAfter`, not never.
    @Test func aRefusedPeerMayBeDialledOnceItIsPinnedAndARefusalByTheOtherSideIsABackOff() {
        var gate = T.gate()
        _ = gate.connected(T.carol, now: T.start)
        _ = gate.line("n", now: T.later)
        #expect(!gate.mayDial(T.carol, now: T.later))
        gate.trusted(T.carol.deviceID)
        #expect(gate.mayDial(T.carol, now: T.later))
        #expect(!gate.isRefused(T.carol.peerID))
        gate.notAccepted(by: T.dave.peerID, now: T.start)
        #expect(!gate.mayDial(T.dave, now: T.start + .seconds(59)))
        #expect(gate.retries(now: T.start + .seconds(59)).isEmpty)
        #expect(gate.retries(now: T.start + ChatGate.retryAfter) == [T.dave.peerID])
        #expect(gate.mayDial(T.dave, now: T.start + ChatGate.retryAfter))
    }

    /// M3: a request question outlives no request: past the session's decision timeout it is dropped.
    @Test func aRequestQuestionOlderThanTheDecisionTimeoutIsDropped() {
        var gate = ChatGate(policy: .ask, askTimeout: .seconds(60), requestTimeout: .seconds(60))
        _ = gate.connected(T.carol, now: T.start)
        _ = gate.requested(T.dave, now: T.start)
        let actions = gate.tick(now: T.start + .seconds(60))
        #expect(actions.contains(.answered(T.dave, .gone)), "\(actions)")
        #expect(gate.asking == nil)
    }
}

extension ChatGateReviewTests {
    /// Low: a peer ID is what a peer claims, its device is what it proves. Another device that shows a member's (or
    /// an admitted peer's) peer ID is no member: it is asked about, and its lines are not shown as the member's.
    @Test func anotherDeviceShowingALetInPeersIDIsNoMember() {
        let impostor = PeerInfo(
            peerID: T.carol.peerID, deviceID: DeviceID(bytes: [UInt8](repeating: 0xEE, count: 32))!,
            displayName: "carol", mode: .peer, address: nil, isDiscovered: true, isAcceptingConnections: true,
            state: .connected, pairingCode: "461214", isTrusted: false)
        var gate = T.gate()
        _ = gate.requested(T.carol, now: T.start)
        _ = gate.line("y", now: T.later)
        _ = gate.accepted(T.carol.peerID)
        #expect(gate.connected(impostor, now: T.later) == [.ask(impostor)])
        var member = T.gate(.all)
        _ = member.connected(T.carol, now: T.start)
        #expect(member.message("hi", from: impostor, mode: .reliable).isEmpty)
        #expect(member.message("hi", from: T.carol, mode: .reliable) == [.show("hi", from: T.carol, mode: .reliable)])
    }

    /// Second review: a dial that failed for another reason than a refusal (an honest full server, the peer's rate
    /// limit, a stale address) made the peer available again and was dialled at once, a handshake and a line each
    /// time, pinned peers too. It now waits 2, 4, 8 ... s (at most `retryAfter`), and a join starts it over.
    @Test func aFailedDialWaitsLongerEachTimeAndAJoinStartsOver() {
        var gate = T.gate()
        gate.dialFailed(T.alice.peerID, now: T.start)
        #expect(!gate.mayDial(T.alice, now: T.start + .seconds(1)), "a pinned peer waits too")
        #expect(gate.retries(now: T.start + .seconds(1)).isEmpty)
        #expect(gate.retries(now: T.start + .seconds(2)) == [T.alice.peerID])
        #expect(gate.retries(now: T.start + .seconds(3)).isEmpty, "given back once")
        #expect(gate.mayDial(T.alice, now: T.start + .seconds(2)))
        gate.dialFailed(T.alice.peerID, now: T.start + .seconds(2))
        #expect(!gate.mayDial(T.alice, now: T.start + .seconds(5)), "the second wait is longer")
        #expect(gate.mayDial(T.alice, now: T.start + .seconds(6)))
        for _ in 0..<10 { gate.dialFailed(T.alice.peerID, now: T.start) }
        #expect(gate.mayDial(T.alice, now: T.start + ChatGate.retryAfter), "never longer than retryAfter")
        _ = gate.connected(T.alice, now: T.start)
        gate.dialFailed(T.alice.peerID, now: T.start)
        #expect(gate.mayDial(T.alice, now: T.start + .seconds(2)), "a join starts the count over")
    }
}
