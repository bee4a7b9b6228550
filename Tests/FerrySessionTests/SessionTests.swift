import FerrySecurity
import FerryStateMachines
import FerrySystem
import FerryTestSupport
import FerryWire
import Testing

@testable import FerrySession

/// Reads one session's events in order; `next(where:)` skips the others, with a generous upper bound.
final class EventReader: @unchecked Sendable {
    // Only the test's own task touches the iterator, one call at a time.
    private var iterator: AsyncStream<SessionEvent>.Iterator

    init(_ session: Session) {
        iterator = session.events.makeAsyncIterator()
    }

    func next(timeout: Duration = .seconds(60), where predicate: (SessionEvent) -> Bool) async throws -> SessionEvent {
        let deadline = ContinuousClock.now + timeout
        while ContinuousClock.now < deadline {
            guard let event = await iterator.next() else { throw SessionError.sessionClosed }
            if predicate(event) { return event }
        }
        throw SessionError.connectTimedOut(peer: "event", after: timeout)
    }

    func nextData() async throws -> ([UInt8], DataMode) {
        let event = try await next { if case .dataReceived = $0 { true } else { false } }
        guard case .dataReceived(let bytes, _, let mode) = event else { return ([], .reliable) }
        return (bytes, mode)
    }
}

/// The session API in-process, on loopback, without multicast (peers are reached by address).
@Suite(.serialized) struct SessionTests {
    static func configuration(
        _ name: String, mode: PeerMode = .peer, policy: AcceptPolicy = .all, maxPeers: Int = 16
    ) -> SessionConfiguration {
        SessionConfiguration(
            sessionID: "unit", displayName: name, mode: mode,
            identity: TestIdentity.named(name), listenPort: 0,
            discoveryEnabled: false, acceptPolicy: policy, maxPeers: maxPeers)
    }

    /// Runs `body` with two sessions on one reactor, `bob` listening and `alice` to reach him by address;
    /// both close (and the reactor shuts down) when it returns or throws.
    static func withPair(
        bob: SessionConfiguration, alice: SessionConfiguration = configuration("alice"),
        _ body: (_ bob: Session, _ alice: Session) async throws -> Void
    ) async throws {
        let reactor = try Reactor()
        defer { reactor.shutdown() }
        try await Session.run(configuration: bob, reactor: reactor) { bob in
            try await Session.run(configuration: alice, reactor: reactor) { alice in
                try await body(bob, alice)
            }
        }
    }

    static func address(of session: Session) async -> SocketAddress {
        .ipv4(.loopback, port: await session.listenPort)
    }

    @Test func requestIsAskedAcceptedAndMessagesFlowInOrder() async throws {
        try await Self.withPair(bob: Self.configuration("bob", policy: .ask)) { bob, alice in
            let bobEvents = EventReader(bob)
            let aliceEvents = EventReader(alice)
            let address = await Self.address(of: bob)
            async let connected = alice.connect(toAddress: address, timeout: .seconds(30))
            let request = try await bobEvents.next { if case .connectionRequested = $0 { true } else { false } }
            guard case .connectionRequested(let who) = request else { return }
            #expect(who.displayName == "alice")
            try await bob.accept(who.peerID)
            let info = try await connected
            #expect(info.displayName == "bob")
            #expect(await alice.peers(withState: .connected).map(\.displayName) == ["bob"])
            for index in 0..<100 {
                try await alice.send([UInt8(index)], to: [info.peerID])
            }
            for index in 0..<100 {
                let (bytes, mode) = try await bobEvents.nextData()
                #expect(bytes == [UInt8(index)] && mode == .reliable)
            }
            try await bob.sendToAll(Array(repeating: 7, count: 3 << 20))  // a large message, 3 MiB
            let (large, _) = try await aliceEvents.nextData()
            #expect(large.count == 3 << 20)
        }
    }

    @Test func denyCarriesItsReason() async throws {
        try await Self.withPair(bob: Self.configuration("grumpy", policy: .none)) { bob, alice in
            let address = await Self.address(of: bob)
            await #expect(throws: SessionError.denied(peer: "grumpy", reason: .deniedByUser, detail: "")) {
                try await alice.connect(toAddress: address)
            }
        }
    }

    @Test func serverPastItsLimitDeniesAsFull() async throws {
        let reactor = try Reactor()
        defer { reactor.shutdown() }
        let server = Self.configuration("server", mode: .server, maxPeers: 1)
        try await Session.run(configuration: server, reactor: reactor) { server in
            let address = await Self.address(of: server)
            try await Session.run(configuration: Self.configuration("one", mode: .client), reactor: reactor) { one in
                try await one.connect(toAddress: address)
                try await Session.run(configuration: Self.configuration("two", mode: .client), reactor: reactor) { two in
                    do {
                        try await two.connect(toAddress: address)
                        Issue.record("the second client was accepted")
                    } catch let SessionError.denied(_, reason, _) {
                        #expect(reason == .serverFull)
                    }
                }
            }
        }
    }

    @Test func unreliableMessagesHaveALimitAndArrive() async throws {
        try await Self.withPair(bob: Self.configuration("bob")) { bob, alice in
            let bobEvents = EventReader(bob)
            let info = try await alice.connect(toAddress: await Self.address(of: bob))
            await #expect(throws: SessionError.datagramTooLarge(size: 1201, limit: 1200)) {
                try await alice.send(Array(repeating: 1, count: 1201), to: [info.peerID], mode: .unreliable)
            }
            // Datagrams may be lost; a few are sent so that one arrives.
            for _ in 0..<5 {
                try await alice.send(Array(repeating: 2, count: 1200), to: [info.peerID], mode: .unreliable)
            }
            let (bytes, mode) = try await bobEvents.nextData()
            #expect(bytes == Array(repeating: 2, count: 1200) && mode == .unreliable)
        }
    }

    @Test func disconnectIsReportedWithTheGoodbye() async throws {
        try await Self.withPair(bob: Self.configuration("bob")) { bob, alice in
            let bobEvents = EventReader(bob)
            let info = try await alice.connect(toAddress: await Self.address(of: bob))
            _ = try await bobEvents.next {
                if case .peerStateChanged(_, .connected, _) = $0 { true } else { false }
            }
            await alice.disconnect(info.peerID)
            let event = try await bobEvents.next {
                if case .peerStateChanged(_, .disconnected, _) = $0 { true } else { false }
            }
            guard case .peerStateChanged(let peer, _, let reason) = event else { return }
            #expect(peer.displayName == "alice")
            #expect(reason?.description.contains("goodbye") == true)
            await #expect(throws: SessionError.notConnected("bob")) {
                try await alice.send([1], to: [info.peerID])
            }
        }
    }

    @Test func closingTheSessionEndsItsEventsAndFreesItsDescriptors() async throws {
        let reactor = try Reactor()
        defer { reactor.shutdown() }
        let baseline = reactor.openDescriptorCount
        let events = try await Session.run(configuration: Self.configuration("bob"), reactor: reactor) { bob in
            _ = try await Session.run(configuration: Self.configuration("alice"), reactor: reactor) { alice in
                try await alice.connect(toAddress: await Self.address(of: bob))
            }
            return bob.events
        }
        for await _ in events {}  // ends: the session finished its stream
        #expect(reactor.openDescriptorCount == baseline)
    }

    @Test func otherSessionIsRefused() async throws {
        let reactor = try Reactor()
        defer { reactor.shutdown() }
        var other = Self.configuration("elsewhere")
        other.sessionID = "another"
        try await Session.run(configuration: other, reactor: reactor) { bob in
            try await Session.run(configuration: Self.configuration("alice"), reactor: reactor) { alice in
                let address = await Self.address(of: bob)
                await #expect(
                    throws: SessionError.connectFailed(
                        peer: address.description, underlying: "it belongs to another session")
                ) {
                    try await alice.connect(toAddress: address)
                }
            }
        }
    }
}

/// A peer that completes the handshake, keeps sending heartbeats, and never reads again.
@Suite(.serialized) struct StalledPeerTests {
    @Test func peerThatStopsReadingIsDisconnectedAndCloseStaysBounded() async throws {
        let reactor = try Reactor()
        defer { reactor.shutdown() }
        let listener = try reactor.listenTCP(on: .ipv4(.loopback, port: 0))
        defer { listener.close() }
        let fake = Task {
            let tcp = try await listener.accept()
            let identity = TestIdentity.named("stuck")
            let link = try TLSStream(over: tcp, context: TLSContext(identity: identity), role: .server)
            defer { link.close() }
            let hello = Hello(
                peerID: PeerID(rawValue: 42), deviceID: identity.deviceID, mode: .peer,
                capabilities: [], listenPort: 0, datagramPort: 0, sessionID: "unit", displayName: "stuck")
            // Read the hello (inside TLS), answer with ours and an accept (the request follows our hello), then go
            // deaf.
            var decoder = FrameDecoder(maximumPayloadLength: Limits.maxHelloPayload)
            var frames = 0
            while frames < 1 {
                let bytes = try await link.read(maxBytes: 4096)
                if bytes.isEmpty { return }
                decoder.append(bytes)
                while case .some(.some) = try? decoder.nextFrame() { frames += 1 }
            }
            try await link.write(SessionMessage.hello(hello).encoded() + SessionMessage.accept.encoded())
            var sequence: UInt64 = 0
            while !Task.isCancelled {
                sequence += 1
                try await link.write(SessionMessage.heartbeat(Heartbeat(sequence: sequence)).encoded())
                try await reactor.sleep(until: .now + .milliseconds(300))
            }
        }
        defer { fake.cancel() }
        var configuration = SessionTests.configuration("sender")
        configuration.disconnectTimeout = .seconds(2)
        try await Session.run(configuration: configuration, reactor: reactor) { sender in
            let events = EventReader(sender)
            let peer = try await sender.connect(toAddress: listener.localAddress, timeout: .seconds(30))
            // Far more than the socket buffers and the writer's queue hold: the sender must not hang.
            let pusher = Task {
                for _ in 0..<64 { try await sender.send(Array(repeating: 1, count: 1 << 20), to: [peer.peerID]) }
            }
            _ = try await events.next {
                if case .peerStateChanged(_, .disconnected, _) = $0 { true } else { false }
            }
            _ = await pusher.result  // ends: either all queued or the peer is gone
        }
    }
}
