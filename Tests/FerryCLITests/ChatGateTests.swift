import FerryWire
import Testing

@testable import FerryCLI
@testable import FerrySession

/// Issue 28, 10: first contact in `ferry chat` as for transfers. The gate between the session and the screen,
/// action by action: a stranger is a question, its lines are held until the person lets it in and dropped on a no,
/// a pinned peer joins without a question, `--accept trusted` refuses a stranger without asking.
@Suite struct ChatGateTests {
    static let start = ContinuousClock.now
    static let later = start + .seconds(2)

    static func peer(_ name: String, id: UInt64, trusted: Bool = false, code: String? = "461214") -> PeerInfo {
        PeerInfo(
            peerID: PeerID(rawValue: id), deviceID: DeviceID(bytes: [UInt8](repeating: UInt8(id), count: 32))!,
            displayName: name, mode: .peer, address: nil, isDiscovered: true, isAcceptingConnections: true,
            state: .connected, pairingCode: code, isTrusted: trusted)
    }

    static let carol = peer("carol", id: 3)
    static let dave = peer("dave", id: 4)
    static let alice = peer("alice", id: 1, trusted: true)

    static func gate(_ policy: ChatGate.Policy = .ask) -> ChatGate {
        ChatGate(policy: policy, askTimeout: .seconds(60))
    }

    @Test func aDialledStrangersLinesAreHeldUntilThePersonLetsItIn() {
        var gate = Self.gate()
        #expect(gate.connected(Self.carol, now: Self.start) == [.ask(Self.carol)])
        #expect(gate.message("psst", from: Self.carol, mode: .reliable).isEmpty)
        #expect(!gate.members.contains(Self.carol.peerID))
        #expect(
            gate.line("y", now: Self.later)
                == [
                    .answered(Self.carol, .accept), .join(Self.carol), .show("psst", from: Self.carol, mode: .reliable),
                ])
        #expect(gate.members.contains(Self.carol.peerID))
        #expect(
            gate.message("hi", from: Self.carol, mode: .reliable) == [.show("hi", from: Self.carol, mode: .reliable)])
    }

    @Test func aStrangerRefusedWithNoIsNeverShownAndItsLinkEndsNotAccepted() {
        var gate = Self.gate()
        _ = gate.connected(Self.carol, now: Self.start)
        _ = gate.message("buy now", from: Self.carol, mode: .reliable)
        #expect(
            gate.line("n", now: Self.later) == [
                .answered(Self.carol, .deny), .refuse(Self.carol, .dialled, detail: ""),
            ])
        #expect(gate.message("still here", from: Self.carol, mode: .reliable).isEmpty)
        #expect(gate.members.isEmpty)
    }

    @Test func aRequestingStrangerIsAcceptedOnlyAfterTheAnswerAndJoinsWhenItsLinkConnects() {
        var gate = Self.gate()
        #expect(gate.requested(Self.carol, now: Self.start) == [.ask(Self.carol)])
        #expect(gate.line("yes", now: Self.later) == [.accept(Self.carol, answer: .accept)])
        // Its link may connect before the accept returns: "you let carol in" first, then the join line.
        #expect(gate.connected(Self.carol, now: Self.later).isEmpty)
        #expect(gate.accepted(Self.carol.peerID) == [.answered(Self.carol, .accept), .join(Self.carol)])
        var slow = Self.gate()
        _ = slow.requested(Self.carol, now: Self.start)
        _ = slow.line("y", now: Self.later)
        #expect(slow.accepted(Self.carol.peerID) == [.answered(Self.carol, .accept)])
        #expect(slow.connected(Self.carol, now: Self.later) == [.join(Self.carol)])
    }

    @Test func alwaysPinsTheStrangerButOnlyWithACodeToCompare() {
        var gate = Self.gate()
        _ = gate.requested(Self.carol, now: Self.start)
        // A request: pinned by the room once its accept succeeded (the answer comes with the accept).
        let actions = gate.line("a", now: Self.later) ?? []
        #expect(actions.contains(.accept(Self.carol, answer: .always)), "\(actions)")
        #expect(gate.accepted(Self.carol.peerID).contains(.pin(Self.carol)))
        var dialled = Self.gate()
        _ = dialled.connected(Self.dave, now: Self.start)
        #expect((dialled.line("a", now: Self.later) ?? []).contains(.pin(Self.dave)))
        let uncoded = Self.peer("eve", id: 5, code: nil)
        _ = gate.requested(uncoded, now: Self.start)
        let once = gate.line("always", now: Self.later) ?? []
        #expect(!once.contains(.pin(uncoded)) && once.contains(.accept(uncoded, answer: .accept)), "\(once)")
    }

    @Test func aPinnedPeerJoinsWithoutAQuestion() {
        var gate = Self.gate()
        #expect(gate.requested(Self.alice, now: Self.start) == [.accept(Self.alice, answer: nil)])
        #expect(gate.connected(Self.alice, now: Self.start) == [.join(Self.alice)])
        var dialling = Self.gate()
        #expect(dialling.connected(Self.alice, now: Self.start) == [.join(Self.alice)])
        #expect(dialling.asking == nil)
    }

    @Test func trustedOnlyRefusesADialledStrangerWithoutAsking() {
        var gate = Self.gate(.trusted)
        #expect(
            gate.connected(Self.carol, now: Self.start)
                == [.refuse(Self.carol, .dialled, detail: ChatGate.trustedOnlyDetail)])
        #expect(gate.asking == nil)
        #expect(gate.connected(Self.alice, now: Self.start) == [.join(Self.alice)])
    }

    @Test func questionsComeOneAtATimeAndOtherLinesAreNoAnswers() {
        var gate = Self.gate()
        #expect(gate.connected(Self.carol, now: Self.start) == [.ask(Self.carol)])
        #expect(gate.requested(Self.dave, now: Self.start).isEmpty)
        #expect(gate.line("hello everyone", now: Self.later) == nil)
        #expect(gate.reminder.count == 1)
        #expect(gate.asking == Self.carol)
        let actions = gate.line("n", now: Self.later) ?? []
        #expect(actions.last == .ask(Self.dave), "\(actions)")
    }

    /// A peer whose link ends is available again and the lower ID dials it: without a memory of refusals, two chats
    /// that refused each other met again at once, thousands of times a second.
    @Test func aRefusedPeerIsNeitherDialledNorAskedAboutAgain() {
        var gate = Self.gate()
        _ = gate.connected(Self.carol, now: Self.start)
        _ = gate.line("n", now: Self.later)
        #expect(!gate.mayDial(Self.carol, now: Self.later))
        #expect(gate.requested(Self.carol, now: Self.later) == [.refuse(Self.carol, .request, detail: "")])
        #expect(gate.asking == nil)
        var trustedOnly = Self.gate(.trusted)
        _ = trustedOnly.connected(Self.dave, now: Self.start)
        #expect(!trustedOnly.mayDial(Self.dave, now: Self.later))
        var refusedBy = Self.gate()
        refusedBy.notAccepted(by: Self.dave.peerID, now: Self.start)
        #expect(!refusedBy.mayDial(Self.dave, now: Self.later) && refusedBy.mayDial(Self.carol, now: Self.later))
    }

    @Test func anAnswerTypedAsTheQuestionAppearsIsNotTaken() {
        var gate = Self.gate()
        _ = gate.connected(Self.carol, now: Self.start)
        let early = gate.line("y", now: Self.start + .milliseconds(100)) ?? []
        #expect(!early.contains(.join(Self.carol)), "\(early)")
        #expect(gate.asking == Self.carol)
    }

    @Test func aQuestionNobodyAnswersRefusesTheStranger() {
        var gate = Self.gate()
        _ = gate.requested(Self.carol, now: Self.start)
        #expect(gate.tick(now: Self.start + .seconds(59)).isEmpty)
        #expect(
            gate.tick(now: Self.start + .seconds(60))
                == [.answered(Self.carol, .expired), .refuse(Self.carol, .request, detail: "nobody answered in time")])
    }

    @Test func heldLinesAreBounded() {
        var gate = Self.gate()
        _ = gate.connected(Self.carol, now: Self.start)
        for index in 0..<(ChatGate.maximumHeldLines + 5) {
            _ = gate.message("line \(index)", from: Self.carol, mode: .reliable)
        }
        let actions = gate.line("y", now: Self.later) ?? []
        #expect(actions.count { if case .show = $0 { true } else { false } } == ChatGate.maximumHeldLines)
        #expect(actions.last == .note("5 more lines carol wrote before you answered were not kept"))
    }

    @Test func aStrangerThatLeavesWhileAskedAboutTakesItsQuestionAlong() {
        var gate = Self.gate()
        _ = gate.connected(Self.carol, now: Self.start)
        _ = gate.connected(Self.dave, now: Self.start)
        let (wasMember, actions) = gate.left(Self.carol.peerID, now: Self.later)
        #expect(!wasMember)
        #expect(actions == [.answered(Self.carol, .gone), .ask(Self.dave)])
    }
}
