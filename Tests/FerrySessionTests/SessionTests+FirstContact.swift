import FerryWire
import Testing

@testable import FerrySession

/// Issue 28, 10 (review H1, M3): what an application that asks its person needs from the session. The side that
/// asked learns the pairing code before the answer (`awaitingAnswer`), and a request that ends unanswered is
/// reported (`requestEnded`), so that its question can go.
extension SessionTests {
    @Test func theAskingSideLearnsTheCodeBeforeTheAnswerAndARequestThatEndsIsReported() async throws {
        try await Self.withPair(bob: Self.configuration("bob", policy: .ask)) { bob, alice in
            let bobEvents = EventReader(bob)
            let aliceEvents = EventReader(alice)
            let address = await Self.address(of: bob)
            let connecting = Task { try await alice.connect(toAddress: address, timeout: .seconds(60)) }
            let request = try await bobEvents.next { if case .connectionRequested = $0 { true } else { false } }
            guard case .connectionRequested(let who) = request else { return }
            let waiting = try await aliceEvents.next { if case .awaitingAnswer = $0 { true } else { false } }
            guard case .awaitingAnswer(let asked) = waiting else { return }
            #expect(asked.displayName == "bob")
            #expect(asked.pairingCode != nil && asked.pairingCode == who.pairingCode)
            await alice.disconnect(asked.peerID)  // alice gives up before bob's answer
            let ended = try await bobEvents.next { if case .requestEnded = $0 { true } else { false } }
            guard case .requestEnded(let gone) = ended else { return }
            #expect(gone.peerID == who.peerID)
            await #expect(throws: SessionError.self) { try await bob.accept(who.peerID) }
            _ = try? await connecting.value
        }
    }
}
