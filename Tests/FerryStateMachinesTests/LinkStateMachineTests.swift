import FerryWire
import Testing

@testable import FerryStateMachines

/// Two link state machines wired back to back, driven by a virtual clock: no socket, no thread, no sleep.
struct LinkPair {
    var initiator: LinkStateMachine
    var acceptor: LinkStateMachine
    var now: ContinuousClock.Instant
    /// Non-send actions each side produced, in order.
    var initiatorEvents: [LinkStateMachine.Action] = []
    var acceptorEvents: [LinkStateMachine.Action] = []
    var toAcceptor: [UInt8] = []
    var toInitiator: [UInt8] = []

    init(
        purpose: LinkStateMachine.Purpose = .connect(timeout: .seconds(5)), acceptorSession: String = "s",
        disconnectTimeout: Duration = .seconds(3)
    ) {
        now = ContinuousClock.now
        initiator = LinkStateMachine(
            role: .initiator(purpose),
            configuration: .init(localHello: .fixture(peer: 1, session: "s"), disconnectTimeout: disconnectTimeout),
            now: now)
        acceptor = LinkStateMachine(
            role: .acceptor,
            configuration: .init(
                localHello: .fixture(peer: 2, session: acceptorSession),
                disconnectTimeout: disconnectTimeout),
            now: now)
        record(initiator.start(now: now), fromInitiator: true)
        record(acceptor.start(now: now), fromInitiator: false)
    }

    mutating func record(_ actions: [LinkStateMachine.Action], fromInitiator: Bool) {
        for action in actions {
            if case .send(let bytes) = action {
                if fromInitiator { toAcceptor += bytes } else { toInitiator += bytes }
            } else if fromInitiator {
                initiatorEvents.append(action)
            } else {
                acceptorEvents.append(action)
            }
        }
    }

    /// Delivers queued bytes both ways until both sides are quiet; `chunk` splits deliveries.
    mutating func pump(chunk: Int = .max) {
        while !toAcceptor.isEmpty || !toInitiator.isEmpty {
            if !toAcceptor.isEmpty {
                let part = Array(toAcceptor.prefix(chunk))
                toAcceptor.removeFirst(part.count)
                record(acceptor.bytesReceived(part, now: now), fromInitiator: false)
            }
            if !toInitiator.isEmpty {
                let part = Array(toInitiator.prefix(chunk))
                toInitiator.removeFirst(part.count)
                record(initiator.bytesReceived(part, now: now), fromInitiator: true)
            }
        }
    }

    mutating func advance(_ duration: Duration) {
        now = now + duration
        record(initiator.tick(now: now), fromInitiator: true)
        record(acceptor.tick(now: now), fromInitiator: false)
    }
}

extension Hello {
    static func fixture(peer: UInt64, session: String, name: String? = nil) -> Hello {
        Hello(
            peerID: PeerID(rawValue: peer), deviceID: DeviceID(bytes: Array(repeating: UInt8(peer), count: 32))!,
            mode: .peer, capabilities: [.zlib, .datagrams], listenPort: 4000 + UInt16(peer),
            datagramPort: 5000 + UInt16(peer), sessionID: session, displayName: name ?? "peer-\(peer)")
    }
}

@Suite struct LinkStateMachineTests {
    @Test func connectAndAccept() {
        var pair = LinkPair()
        pair.pump()
        #expect(pair.initiatorEvents == [.helloReceived(.fixture(peer: 2, session: "s"))])
        #expect(pair.acceptorEvents == [.helloReceived(.fixture(peer: 1, session: "s")), .connectionRequested])
        #expect(pair.acceptor.state == .awaitingDecision)
        pair.record(pair.acceptor.accept(now: pair.now), fromInitiator: false)
        pair.pump()
        #expect(pair.initiatorEvents.last == .connected)
        #expect(pair.acceptorEvents.last == .connected)
        #expect(pair.initiator.state == .connected && pair.acceptor.state == .connected)
    }

    @Test func byteByByteGivesTheSameEvents() {
        var whole = LinkPair()
        whole.pump()
        var split = LinkPair()
        split.pump(chunk: 1)
        #expect(whole.initiatorEvents == split.initiatorEvents)
        #expect(whole.acceptorEvents == split.acceptorEvents)
    }

    @Test func messagesFlowInOrderOnceConnected() {
        var pair = LinkPair()
        pair.pump()
        pair.record(pair.acceptor.accept(now: pair.now), fromInitiator: false)
        pair.pump()
        for index in 0..<5 {
            let bytes = pair.initiator.message([UInt8(index)], now: pair.now)
            #expect(bytes != nil)
            pair.toAcceptor += bytes ?? []
        }
        pair.pump()
        let received = pair.acceptorEvents.compactMap { action -> [UInt8]? in
            if case .messageReceived(let payload) = action { return payload }
            return nil
        }
        #expect(received == [[0], [1], [2], [3], [4]])
    }

    @Test func messageRefusedBeforeConnected() {
        var pair = LinkPair()
        #expect(pair.initiator.message([1], now: pair.now) == nil)
    }

    @Test func denyReachesTheInitiatorWithItsReason() {
        var pair = LinkPair()
        pair.pump()
        let deny = Deny(reason: .serverFull, detail: "1 of 1 peers connected")
        pair.record(pair.acceptor.deny(deny, now: pair.now), fromInitiator: false)
        pair.pump()
        #expect(pair.acceptorEvents.last == .close(.deniedLocally(deny)))
        #expect(pair.initiatorEvents.last == .close(.denied(deny)))
    }

    @Test func otherSessionIsDeniedAtTheHello() {
        var pair = LinkPair(acceptorSession: "other")
        pair.pump()
        let deny = Deny(reason: .sessionMismatch, detail: "this peer is in another session")
        #expect(pair.acceptorEvents == [.close(.deniedLocally(deny))])
        #expect(pair.initiatorEvents.last == .close(.deniedLocally(deny)))
    }

    @Test func probeEndsAfterTheHello() {
        var pair = LinkPair(purpose: .probe)
        pair.pump()
        #expect(pair.initiatorEvents == [.helloReceived(.fixture(peer: 2, session: "s")), .close(.probeFinished)])
        #expect(pair.acceptorEvents.last == .close(.goodbye(Goodbye(reason: .disconnected))))
    }

    @Test func connectionRequestTimesOut() {
        var pair = LinkPair(purpose: .connect(timeout: .seconds(5)))
        pair.pump()
        pair.advance(.seconds(4))
        pair.pump()
        #expect(pair.initiator.state == .requesting)
        pair.advance(.seconds(2))
        #expect(pair.initiatorEvents.last == .close(.timedOut(.connectionRequest)))
        pair.pump()
        #expect(pair.acceptorEvents.last == .close(.goodbye(Goodbye(reason: .timedOut))))
    }

    @Test func handshakeTimesOutWithoutAHello() {
        let now = ContinuousClock.now
        var machine = LinkStateMachine(
            role: .acceptor, configuration: .init(localHello: .fixture(peer: 2, session: "s")), now: now)
        _ = machine.start(now: now)
        #expect(machine.tick(now: now + .seconds(9)) == [])
        #expect(machine.tick(now: now + .seconds(10)) == [.close(.timedOut(.handshake))])
        #expect(machine.tick(now: now + .seconds(11)) == [])
    }

    @Test func heartbeatsKeepAnIdleLinkAliveAndSilenceEndsIt() {
        var pair = LinkPair(disconnectTimeout: .seconds(3))
        pair.pump()
        pair.record(pair.acceptor.accept(now: pair.now), fromInitiator: false)
        pair.pump()
        for _ in 0..<20 {
            pair.advance(.milliseconds(500))
            pair.pump()
        }
        #expect(pair.initiator.state == .connected && pair.acceptor.state == .connected)
        // Now the acceptor goes silent (killed): its bytes are lost.
        var initiator = pair.initiator
        var now = pair.now
        var closes: [LinkStateMachine.Action] = []
        for _ in 0..<7 {
            now = now + .milliseconds(500)
            closes += initiator.tick(now: now).filter { if case .close = $0 { return true } else { return false } }
        }
        #expect(closes == [.close(.timedOut(.liveness))])
    }

    @Test func aFailedTransportClosesWithASecurityFailureAndSendsNothing() {
        let now = ContinuousClock.now
        var machine = LinkStateMachine(
            role: .acceptor, configuration: .init(localHello: .fixture(peer: 2, session: "s")), now: now)
        _ = machine.start(now: now)
        #expect(
            machine.securityFailed("the TLS handshake failed") == [.close(.securityFailure("the TLS handshake failed"))]
        )
        #expect(machine.state == .closed)
        #expect(machine.securityFailed("again") == [])
    }

    @Test func refusingAnAuthenticatedPeerSaysGoodbyeWithTheReason() {
        var pair = LinkPair()
        pair.pump()
        let actions = pair.acceptor.refuse("certificate mismatch", now: pair.now)
        #expect(
            actions == [
                .send(SessionMessage.goodbye(Goodbye(reason: .disconnected, detail: "certificate mismatch")).encoded()),
                .close(.securityFailure("certificate mismatch")),
            ])
        #expect(pair.acceptor.state == .closed)
    }

    @Test func garbageInsteadOfAFrameIsAProtocolError() {
        let now = ContinuousClock.now
        var machine = LinkStateMachine(
            role: .acceptor, configuration: .init(localHello: .fixture(peer: 2, session: "s")), now: now)
        let actions = machine.bytesReceived(Array("GET / HTTP/1.1\r\n".utf8), now: now)
        guard case .close(.protocolError) = actions.last else {
            Issue.record("expected a protocol error, got \(actions)")
            return
        }
        #expect(machine.state == .closed)
    }

    @Test func oversizedFrameBeforeHelloIsRefusedFromItsHeader() {
        let now = ContinuousClock.now
        var machine = LinkStateMachine(
            role: .acceptor, configuration: .init(localHello: .fixture(peer: 2, session: "s")), now: now)
        // A hello header announcing 4 GiB - 1: refused before any payload arrives.
        let bytes: [UInt8] = [0x00, 0x01, 0xFF, 0xFF, 0xFF, 0xFF]
        let actions = machine.bytesReceived(bytes, now: now)
        guard case .close(.protocolError(let text)) = actions.last else {
            Issue.record("expected a protocol error, got \(actions)")
            return
        }
        #expect(!text.isEmpty)
    }

    @Test func messageBeforeHelloIsAProtocolError() {
        let now = ContinuousClock.now
        var machine = LinkStateMachine(
            role: .acceptor, configuration: .init(localHello: .fixture(peer: 2, session: "s")), now: now)
        let actions = machine.bytesReceived(SessionMessage.message([1, 2]).encoded(), now: now)
        guard case .close(.protocolError) = actions.last else {
            Issue.record("expected a protocol error, got \(actions)")
            return
        }
    }

    /// PROTOCOL 3.5: the peer learns why its link was closed (goodbye `protocolError` with the reason, inside TLS),
    /// for each way of breaking the protocol: a frame too large, an unknown critical kind, a frame out of order.
    @Test func aProtocolErrorSaysGoodbyeWithProtocolErrorBeforeClosing() {
        let frames: [(String, [UInt8])] = [
            ("frame too large", [0x00, 0x01, 0xFF, 0xFF, 0xFF, 0xFF]),
            ("unknown critical kind", Frame(kind: FrameKind(rawValue: 0x0042), payload: []).encoded()),
            ("message before hello", SessionMessage.message([1, 2]).encoded()),
        ]
        for (name, bytes) in frames {
            let now = ContinuousClock.now
            var machine = LinkStateMachine(
                role: .acceptor, configuration: .init(localHello: .fixture(peer: 2, session: "s")), now: now)
            let actions = machine.bytesReceived(bytes, now: now)
            guard actions.count == 2, case .send(let sent) = actions[0],
                case .close(.protocolError(let text)) = actions[1]
            else {
                Issue.record("\(name): expected a goodbye then a protocol error, got \(actions)")
                continue
            }
            var decoder = FrameDecoder(maximumPayloadLength: Limits.maxFramePayload)
            decoder.append(sent)
            let frame = try? decoder.nextFrame()
            guard let frame, case .goodbye(let goodbye)? = try? SessionMessage(frame: frame) else {
                Issue.record("\(name): the frame sent is not a goodbye: \(sent)")
                continue
            }
            #expect(goodbye.reason == .protocolError, "\(name)")
            #expect(goodbye.detail == text, "\(name)")
        }
    }

    /// PROTOCOL 3.4: heartbeats and ignorable frames are skipped even before the hello; the hello still follows.
    @Test func aHeartbeatBeforeTheHelloIsSkipped() {
        let now = ContinuousClock.now
        var machine = LinkStateMachine(
            role: .acceptor, configuration: .init(localHello: .fixture(peer: 2, session: "s")), now: now)
        let early =
            SessionMessage.heartbeat(Heartbeat(sequence: 1)).encoded()
            + Frame(kind: FrameKind(rawValue: 0x8123), payload: [1, 2, 3]).encoded()
        #expect(machine.bytesReceived(early, now: now).isEmpty)
        let actions = machine.bytesReceived(SessionMessage.hello(.fixture(peer: 1, session: "s")).encoded(), now: now)
        guard case .helloReceived = actions.first else {
            Issue.record("expected the hello to be taken, got \(actions)")
            return
        }
        #expect(machine.state == .awaitingRequest)
    }

    @Test func unknownIgnorableFramesAreSkipped() {
        var pair = LinkPair()
        pair.pump()
        pair.record(pair.acceptor.accept(now: pair.now), fromInitiator: false)
        pair.pump()
        pair.toAcceptor += Frame(kind: FrameKind(0x8123), payload: [9, 9, 9]).encoded()
        pair.toAcceptor += pair.initiator.message([7], now: pair.now)!
        pair.pump()
        #expect(pair.acceptorEvents.last == .messageReceived([7]))
    }

    @Test func unknownCriticalFrameClosesTheLink() {
        var pair = LinkPair()
        pair.pump()
        pair.toAcceptor += Frame(kind: FrameKind(0x0123), payload: []).encoded()
        pair.pump()
        guard case .close(.protocolError) = pair.acceptorEvents.last else {
            Issue.record("expected a protocol error, got \(pair.acceptorEvents)")
            return
        }
    }

    @Test func streamEndReportsOnce() {
        var pair = LinkPair()
        pair.pump()
        #expect(pair.initiator.streamEnded() == [.close(.streamEnded)])
        #expect(pair.initiator.streamEnded() == [])
    }

    @Test func peerGoodbyeEndsTheConnection() {
        var pair = LinkPair()
        pair.pump()
        pair.record(pair.acceptor.accept(now: pair.now), fromInitiator: false)
        pair.pump()
        pair.record(pair.initiator.disconnect(.disconnected, now: pair.now), fromInitiator: true)
        pair.pump()
        #expect(pair.initiatorEvents.last == .close(.localDisconnect(.disconnected)))
        #expect(pair.acceptorEvents.last == .close(.goodbye(Goodbye(reason: .disconnected))))
    }
}

/// The pairing nonces (PROTOCOL.md 7): the acceptor commits in its hello, the initiator sends its nonce with its
/// request, the acceptor reveals; a reveal that does not match the commitment closes the link.
@Suite("Pairing nonces")
struct PairingNonceTests {
    static let initiatorNonce = [UInt8](repeating: 0x11, count: 32)
    static let acceptorNonce = [UInt8](repeating: 0x22, count: 32)

    static func machines(
        commitment: [UInt8]? = SHA256Hasher.digest(acceptorNonce), now: ContinuousClock.Instant
    ) -> (initiator: LinkStateMachine, acceptor: LinkStateMachine) {
        var acceptorHello = Hello.fixture(peer: 2, session: "s")
        acceptorHello.pairingCommitment = commitment
        let initiator = LinkStateMachine(
            role: .initiator(.connect(timeout: .seconds(5))),
            configuration: .init(localHello: .fixture(peer: 1, session: "s"), pairingNonce: initiatorNonce), now: now)
        let acceptor = LinkStateMachine(
            role: .acceptor, configuration: .init(localHello: acceptorHello, pairingNonce: acceptorNonce), now: now)
        return (initiator, acceptor)
    }

    /// Runs the handshake by hand: hellos both ways, the initiator's request, the acceptor's answer to it.
    static func exchange(
        _ initiator: inout LinkStateMachine, _ acceptor: inout LinkStateMachine, now: ContinuousClock.Instant,
        tamper: ([UInt8]) -> [UInt8] = { $0 }
    ) -> (initiator: [LinkStateMachine.Action], acceptor: [LinkStateMachine.Action]) {
        let initiatorHello = initiator.start(now: now)
        let acceptorHello = acceptor.start(now: now)
        var toAcceptor: [UInt8] = []
        var toInitiator: [UInt8] = []
        for case .send(let bytes) in initiatorHello { toAcceptor += bytes }
        for case .send(let bytes) in acceptorHello { toInitiator += bytes }
        var initiatorActions = initiator.bytesReceived(toInitiator, now: now)
        for case .send(let bytes) in initiatorActions { toAcceptor += bytes }
        let acceptorActions = acceptor.bytesReceived(toAcceptor, now: now)
        var answer: [UInt8] = []
        for case .send(let bytes) in acceptorActions { answer += bytes }
        initiatorActions += initiator.bytesReceived(tamper(answer), now: now)
        return (
            initiatorActions.filter { if case .send = $0 { false } else { true } },
            acceptorActions.filter { if case .send = $0 { false } else { true } }
        )
    }

    @Test func bothSidesAgreeOnBothNoncesBeforeTheDecision() {
        let now = ContinuousClock.now
        var (initiator, acceptor) = Self.machines(now: now)
        let (initiatorEvents, acceptorEvents) = Self.exchange(&initiator, &acceptor, now: now)
        let agreed = LinkStateMachine.Action.pairingAgreed(
            initiatorNonce: Self.initiatorNonce, acceptorNonce: Self.acceptorNonce)
        #expect(acceptorEvents.dropFirst() == [agreed, .connectionRequested])  // after helloReceived
        #expect(initiatorEvents.last == agreed)
        #expect(initiator.state == .requesting)
    }

    @Test func aRevealThatDoesNotMatchTheCommitmentClosesTheLink() {
        let now = ContinuousClock.now
        var (initiator, acceptor) = Self.machines(
            commitment: SHA256Hasher.digest([UInt8](repeating: 0x33, count: 32)), now: now)
        let (initiatorEvents, _) = Self.exchange(&initiator, &acceptor, now: now)
        guard case .close(.protocolError(let text)) = initiatorEvents.last else {
            Issue.record("expected a protocol error, got \(initiatorEvents)")
            return
        }
        #expect(text.contains("commitment"))
        #expect(!initiatorEvents.contains { if case .pairingAgreed = $0 { true } else { false } })
    }

    @Test func aSecondRevealIsAProtocolError() {
        let now = ContinuousClock.now
        var (initiator, acceptor) = Self.machines(now: now)
        _ = Self.exchange(&initiator, &acceptor, now: now)
        let again = initiator.bytesReceived(SessionMessage.pairing(Self.acceptorNonce).encoded(), now: now)
        guard case .close(.protocolError) = again.last else {
            Issue.record("expected a protocol error, got \(again)")
            return
        }
    }

    @Test func withoutACommitmentNoNonceIsSentAndNoCodeAgreed() {
        let now = ContinuousClock.now
        var (initiator, acceptor) = Self.machines(commitment: nil, now: now)
        let (initiatorEvents, acceptorEvents) = Self.exchange(&initiator, &acceptor, now: now)
        #expect(!(initiatorEvents + acceptorEvents).contains { if case .pairingAgreed = $0 { true } else { false } })
        #expect(acceptorEvents.last == .connectionRequested)
    }

    @Test func theInitiatorsNonceTravelsOnlyAfterTheAcceptorsHello() {
        let now = ContinuousClock.now
        var (initiator, _) = Self.machines(now: now)
        let start = initiator.start(now: now)
        var sent: [UInt8] = []
        for case .send(let bytes) in start { sent += bytes }
        #expect(!Self.contains(sent, Self.initiatorNonce))
    }

    static func contains(_ haystack: [UInt8], _ needle: [UInt8]) -> Bool {
        guard haystack.count >= needle.count else { return false }
        return (0...(haystack.count - needle.count)).contains { Array(haystack[$0..<($0 + needle.count)]) == needle }
    }
}

/// An acceptor whose hello carries bytes after its display name never reveals a nonce: the initiator took the first
/// 32 of them as a commitment (PROTOCOL.md 4.1: in an acceptor's hello they are one), so an `accept` without the
/// reveal must fail the pairing as a wrong reveal does. Before this, such a link connected with no pairing code.
@Suite struct UnrevealedCommitmentTests {
    /// The acceptor's hello as a peer that speaks no pairing sent it: 40 bytes it meant as extension after the name.
    static func acceptorHelloWithTrailingBytes(_ count: Int) -> [UInt8] {
        var payload = SessionMessage.hello(.fixture(peer: 2, session: "s")).frame.payload
        payload += (0..<count).map { UInt8(truncatingIfNeeded: 0xA0 &+ $0) }
        return Frame(kind: .hello, payload: payload).encoded()
    }

    static func initiator(now: ContinuousClock.Instant) -> LinkStateMachine {
        var machine = LinkStateMachine(
            role: .initiator(.connect(timeout: .seconds(5))),
            configuration: .init(
                localHello: .fixture(peer: 1, session: "s"), pairingNonce: PairingNonceTests.initiatorNonce),
            now: now)
        _ = machine.start(now: now)
        return machine
    }

    @Test func anAcceptWithoutTheRevealOfACommitmentClosesTheLink() {
        let now = ContinuousClock.now
        var initiator = Self.initiator(now: now)
        let afterHello = initiator.bytesReceived(Self.acceptorHelloWithTrailingBytes(40), now: now)
        #expect(initiator.peerHello?.pairingCommitment != nil)
        #expect(
            afterHello.contains(
                .send(
                    SessionMessage.pairing(PairingNonceTests.initiatorNonce).encoded()
                        + SessionMessage.connectionRequest.encoded())))
        let actions = initiator.bytesReceived(SessionMessage.accept.encoded(), now: now)
        #expect(!actions.contains(.connected))
        guard case .close(.protocolError(let text)) = actions.last else {
            Issue.record("expected a protocol error, got \(actions)")
            return
        }
        #expect(text.contains("commitment"))
        #expect(initiator.state == .closed)
    }

    @Test func aRequestWithoutTheRevealStaysUnconnectedUntilItsDeadline() {
        let now = ContinuousClock.now
        var initiator = Self.initiator(now: now)
        _ = initiator.bytesReceived(Self.acceptorHelloWithTrailingBytes(40), now: now)
        let later = now + .seconds(6)
        let actions = initiator.tick(now: later)
        #expect(actions.last == .close(.timedOut(.connectionRequest)))
    }

    /// A deny needs no reveal: nothing connects, and an acceptor may deny before it read the request (10.1 step 3).
    @Test func aDenyBeforeTheRevealIsStillADenial() {
        let now = ContinuousClock.now
        var initiator = Self.initiator(now: now)
        _ = initiator.bytesReceived(Self.acceptorHelloWithTrailingBytes(40), now: now)
        let deny = Deny(reason: .deniedByUser, detail: "")
        let actions = initiator.bytesReceived(SessionMessage.deny(deny).encoded(), now: now)
        #expect(actions == [.close(.denied(deny))])
    }

    /// An initiator's hello has no commitment: everything after its display name is extension, ignored.
    @Test func anInitiatorsTrailingBytesNeverMakeTheAcceptorReveal() {
        let now = ContinuousClock.now
        var (_, acceptor) = PairingNonceTests.machines(now: now)
        _ = acceptor.start(now: now)
        var payload = SessionMessage.hello(.fixture(peer: 1, session: "s")).frame.payload
        payload += [UInt8](repeating: 0x5A, count: 40)
        let hello = Frame(kind: .hello, payload: payload).encoded()
        let actions = acceptor.bytesReceived(hello + SessionMessage.connectionRequest.encoded(), now: now)
        #expect(!actions.contains { if case .send = $0 { true } else { false } })
        #expect(actions.last == .connectionRequested)
    }
}

/// PROTOCOL.md 3.4: after the hello, a frame the link sequence does not allow where it comes closes the link with a
/// goodbye `protocolError`: a `message` or transfer frame before `accept`, a second `connectionRequest` (or one
/// after `accept`), an `accept` or a `connectionRequest` sent the wrong way, a second hello, a second pairing nonce.
@Suite struct LinkSequenceTests {
    enum Point: String, CaseIterable {
        case acceptorBeforeRequest, acceptorDeciding, acceptorConnected, initiatorRequesting
    }

    /// A pair driven to `point`; the side under test is returned as `acceptor` (true) or the initiator.
    static func pair(at point: Point) -> (pair: LinkPair, testsAcceptor: Bool) {
        var pair = LinkPair()
        switch point {
        case .acceptorBeforeRequest:
            // Only the hellos: the initiator's request is held back.
            let hello = pair.toAcceptor
            pair.toAcceptor = []
            pair.record(pair.acceptor.bytesReceived(hello, now: pair.now), fromInitiator: false)
            return (pair, true)
        case .acceptorDeciding, .initiatorRequesting:
            pair.pump()
            return (pair, point == .acceptorDeciding)
        case .acceptorConnected:
            pair.pump()
            pair.record(pair.acceptor.accept(now: pair.now), fromInitiator: false)
            pair.pump()
            return (pair, true)
        }
    }

    static let transferFrame = Frame(kind: FrameKind(rawValue: 0x0100), payload: [1, 2, 3]).encoded()
    static let hello = SessionMessage.hello(.fixture(peer: 1, session: "s")).encoded()

    static let cases: [(Point, String, [UInt8])] = [
        (.acceptorBeforeRequest, "message before the request", SessionMessage.message([7]).encoded()),
        (.acceptorBeforeRequest, "transfer frame before the request", transferFrame),
        (.acceptorBeforeRequest, "accept from the initiator", SessionMessage.accept.encoded()),
        (.acceptorBeforeRequest, "a second hello", hello),
        (.acceptorDeciding, "a second connection request", SessionMessage.connectionRequest.encoded()),
        (.acceptorDeciding, "message before accept", SessionMessage.message([7]).encoded()),
        (.acceptorDeciding, "transfer frame before accept", transferFrame),
        (
            .acceptorDeciding, "a pairing nonce after the request",
            SessionMessage.pairing(Array(repeating: 1, count: 32)).encoded()
        ),
        (.acceptorConnected, "a connection request once connected", SessionMessage.connectionRequest.encoded()),
        (.initiatorRequesting, "message before accept", SessionMessage.message([7]).encoded()),
        (.initiatorRequesting, "transfer frame before accept", transferFrame),
        (.initiatorRequesting, "a connection request from the acceptor", SessionMessage.connectionRequest.encoded()),
    ]

    @Test(arguments: 0..<cases.count)
    func aFrameOutOfItsPlaceIsAProtocolError(_ index: Int) {
        let (point, name, bytes) = Self.cases[index]
        var (pair, testsAcceptor) = Self.pair(at: point)
        let actions =
            testsAcceptor
            ? pair.acceptor.bytesReceived(bytes, now: pair.now) : pair.initiator.bytesReceived(bytes, now: pair.now)
        guard case .close(.protocolError) = actions.last else {
            Issue.record("\(point) \(name): expected a protocol error, got \(actions)")
            return
        }
        #expect(!actions.contains(.connected), "\(name)")
        #expect(!actions.contains { if case .messageReceived = $0 { true } else { false } }, "\(name)")
        #expect(!actions.contains { if case .transferFrameReceived = $0 { true } else { false } }, "\(name)")
    }
}
