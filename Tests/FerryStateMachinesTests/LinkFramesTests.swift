import FerryWire
import Testing

@testable import FerryStateMachines

/// `LinkStateMachine.framesReceived` and `framingFailed`: the entry points of a driver that decodes frames itself
/// (the session's `LinkReader`, which decrypts each payload in place).
@Suite struct LinkFramesTests {
    /// Decodes `bytes` the way `LinkReader` does: with the machine's current limit, delivering the frames before a
    /// refused header first and checking it again against the limit they left, then `framingFailed`.
    static func deliver(
        _ bytes: [UInt8], to machine: inout LinkStateMachine, decoder: inout FrameDecoder,
        now: ContinuousClock.Instant
    ) -> [LinkStateMachine.Action] {
        decoder.append(bytes)
        var actions: [LinkStateMachine.Action] = []
        while machine.state != .closed {
            decoder.maximumPayloadLength = machine.maximumPayloadLength
            var frames: [Frame] = []
            var refused: WireError?
            do throws(WireError) {
                while let frame = try decoder.nextFrame() { frames.append(frame) }
            } catch {
                refused = error
            }
            if !frames.isEmpty {
                actions += machine.framesReceived(frames, now: now)
            } else if let refused {
                actions += machine.framingFailed(refused, now: now)
            } else {
                break
            }
        }
        return actions
    }

    /// Two machines connect, exchange messages of every size up to the largest frame, the way the session drives
    /// them: the events are those of the byte-fed pair, the acceptor's `accept` and a large message after it in the
    /// same delivery included.
    @Test func framesDecodedByTheDriverGiveTheSameEventsAsBytes() {
        var bytes = LinkPair()
        bytes.pump()
        bytes.record(bytes.acceptor.accept(now: bytes.now), fromInitiator: false)
        let big = Array(repeating: UInt8(7), count: 200_000)
        if let frame = bytes.acceptor.message(big, now: bytes.now) { bytes.toInitiator += frame }
        bytes.pump()

        var framed = LinkPair()
        var toAcceptor = FrameDecoder()
        var toInitiator = FrameDecoder()
        func pumpFrames(_ pair: inout LinkPair) {
            while !pair.toAcceptor.isEmpty || !pair.toInitiator.isEmpty {
                let forAcceptor = pair.toAcceptor
                pair.toAcceptor = []
                pair.record(
                    Self.deliver(forAcceptor, to: &pair.acceptor, decoder: &toAcceptor, now: pair.now),
                    fromInitiator: false)
                let forInitiator = pair.toInitiator
                pair.toInitiator = []
                pair.record(
                    Self.deliver(forInitiator, to: &pair.initiator, decoder: &toInitiator, now: pair.now),
                    fromInitiator: true)
            }
        }
        pumpFrames(&framed)
        #expect(framed.initiator.maximumPayloadLength == Limits.maxHelloPayload)
        framed.record(framed.acceptor.accept(now: framed.now), fromInitiator: false)
        #expect(framed.acceptor.maximumPayloadLength == Limits.maxFramePayload)
        if let frame = framed.acceptor.message(big, now: framed.now) { framed.toInitiator += frame }
        pumpFrames(&framed)
        #expect(framed.initiator.maximumPayloadLength == Limits.maxFramePayload)
        #expect(framed.initiatorEvents == bytes.initiatorEvents)
        #expect(framed.acceptorEvents == bytes.acceptorEvents)
        #expect(framed.initiatorEvents.last == .messageReceived(big))
    }

    /// A frame longer than the link takes is a protocol error, whoever decoded it: a goodbye, then close. (The frame
    /// is of an unknown ignorable kind, which the machine skips when it is within the limit.)
    @Test func aFrameAboveTheLimitAndARefusedHeaderAreProtocolErrors() throws {
        let now = ContinuousClock.now
        for refuse in [true, false] {
            var machine = LinkStateMachine(
                role: .acceptor, configuration: .init(localHello: .fixture(peer: 2, session: "s")), now: now)
            let frame = Frame(kind: FrameKind(0x8123), payload: Array(repeating: 0, count: Limits.maxHelloPayload + 1))
            let actions =
                refuse
                ? machine.framingFailed(.frameTooLarge(length: 1025, limit: Limits.maxHelloPayload), now: now)
                : machine.framesReceived([frame], now: now)
            guard case .send(let goodbye) = actions.first, case .close(.protocolError(let text)) = actions.last else {
                Issue.record("expected a goodbye and a protocol error, got \(actions)")
                continue
            }
            #expect(text.contains("1025"))
            var decoder = FrameDecoder()
            decoder.append(goodbye)
            #expect(try decoder.nextFrame()?.kind == .goodbye)
            #expect(machine.state == .closed)
            #expect(machine.framesReceived([frame], now: now).isEmpty)
        }
    }
}
