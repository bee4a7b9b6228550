import FerrySystem
import FerryTestSupport
import FerryWire
import Foundation
import Testing

@testable import FerrySession

/// Messages as `Data` (GameKit's `sendData:toPeers:withDataMode:error:`): to chosen peers and to all, reliable and
/// unreliable, delivered with their sender; the size limits refused before anything is sent.
@Suite(.serialized, .timeLimit(.minutes(5))) struct SessionDataTests {
    /// Alice connected to Bob and Carol (both listening on loopback), all on one reactor.
    static func withTrio(_ body: (_ alice: Session, _ bob: Session, _ carol: Session) async throws -> Void)
        async throws
    {
        let reactor = try Reactor()
        defer { reactor.shutdown() }
        try await Session.run(configuration: SessionTests.configuration("bob"), reactor: reactor) { bob in
            try await Session.run(configuration: SessionTests.configuration("carol"), reactor: reactor) { carol in
                try await Session.run(configuration: SessionTests.configuration("alice"), reactor: reactor) { alice in
                    _ = try await alice.connect(toAddress: await SessionTests.address(of: bob))
                    _ = try await alice.connect(toAddress: await SessionTests.address(of: carol))
                    try await body(alice, bob, carol)
                }
            }
        }
    }

    /// The next message on `events`: its bytes, sender and mode.
    static func nextMessage(_ events: EventReader, timeout: Duration = .seconds(60)) async throws
        -> (data: Data, from: String, mode: DataMode)
    {
        let event = try await events.next(timeout: timeout) { if case .dataReceived = $0 { true } else { false } }
        guard case .dataReceived(let data, let from, let mode) = event else { throw SessionError.sessionClosed }
        return (data, from.displayName, mode)
    }

    @Test func reliableDataGoesToTheChosenPeersThenToAllWithItsSender() async throws {
        try await Self.withTrio { alice, bob, carol in
            let bobEvents = EventReader(bob)
            let carolEvents = EventReader(carol)
            let bobID = try #require(await alice.peers(withState: .connected).first { $0.displayName == "bob" }).peerID
            // A slice of a larger Data (its indices do not start at 0) is sent as the bytes it shows.
            let whole = Data((0..<200).map { UInt8($0) })
            let onlyBob = whole[100..<150]
            try await alice.send(onlyBob, to: [bobID])
            try await alice.sendToAll(Data("to everyone".utf8))
            let first = try await Self.nextMessage(bobEvents)
            #expect(
                first.data == Data((100..<150).map { UInt8($0) }) && first.from == "alice" && first.mode == .reliable)
            #expect(try await Self.nextMessage(bobEvents).data == Data("to everyone".utf8))
            // Carol was not chosen for the first message: the message to all is the first she gets.
            let carols = try await Self.nextMessage(carolEvents)
            #expect(carols.data == Data("to everyone".utf8) && carols.from == "alice")
            // A large one, whole.
            let large = Data(repeating: 0xA5, count: 3 << 20)
            try await bob.sendToAll(large)
            #expect(try await Self.nextMessage(EventReader(alice)).data == large)
        }
    }

    @Test func unreliableDataArrivesWithItsSenderUpToItsLimit() async throws {
        try await Self.withTrio { alice, bob, _ in
            let bobEvents = EventReader(bob)
            let bobID = try #require(await alice.peers(withState: .connected).first { $0.displayName == "bob" }).peerID
            // Exactly the limit is taken. A datagram may be lost, even on loopback: send again until one arrives.
            let datagram = Data(repeating: 0x5A, count: Session.maxUnreliableMessageSize)
            var received: (data: Data, from: String, mode: DataMode)?
            for _ in 0..<20 where received == nil {
                try await alice.send(datagram, to: [bobID], mode: .unreliable)
                received = try? await Self.nextMessage(bobEvents, timeout: .seconds(3))
            }
            let message = try #require(received)
            #expect(message.data == datagram && message.from == "alice" && message.mode == .unreliable)
        }
    }

    @Test func tooLargeDataIsRefusedBeforeAnythingIsSent() async throws {
        try await Self.withTrio { alice, bob, _ in
            let bobEvents = EventReader(bob)
            let bobID = try #require(await alice.peers(withState: .connected).first { $0.displayName == "bob" }).peerID
            let reliable = Session.maxReliableMessageSize
            let unreliable = Session.maxUnreliableMessageSize
            #expect(reliable == 16 << 20 && unreliable == 1200)
            await #expect(throws: SessionError.messageTooLarge(size: reliable + 1, limit: reliable)) {
                try await alice.send(Data(count: reliable + 1), to: [bobID])
            }
            await #expect(throws: SessionError.messageTooLarge(size: reliable + 1, limit: reliable)) {
                try await alice.sendToAll(Data(count: reliable + 1))
            }
            await #expect(throws: SessionError.datagramTooLarge(size: unreliable + 1, limit: unreliable)) {
                try await alice.send(Data(count: unreliable + 1), to: [bobID], mode: .unreliable)
            }
            await #expect(throws: SessionError.datagramTooLarge(size: unreliable + 1, limit: unreliable)) {
                try await alice.sendToAll(Data(count: unreliable + 1), mode: .unreliable)
            }
            // Nothing of those went out: the next message Bob gets is this one.
            try await alice.send(Data("after".utf8), to: [bobID])
            #expect(try await Self.nextMessage(bobEvents).data == Data("after".utf8))
        }
    }
}
