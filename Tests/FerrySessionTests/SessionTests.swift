import FerrySecurity
import Foundation
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

    /// The next event that `predicate` accepts. Throws when none arrives within `timeout`, also while the stream is
    /// silent (the wait races a timer; a stream with no events must fail the test, not hang it), or when the
    /// session's stream ends. After a timeout the stream is finished (cancelling a waiting `next` ends it).
    func next(
        timeout: Duration = .seconds(60), where predicate: @escaping @Sendable (SessionEvent) -> Bool
    ) async throws -> SessionEvent {
        let deadline = ContinuousClock.now + timeout
        return try await withThrowingTaskGroup(of: SessionEvent?.self) { group in
            group.addTask {
                while let event = await self.iterator.next() {
                    if predicate(event) { return event }
                }
                if Task.isCancelled { return nil }
                throw SessionError.sessionClosed
            }
            group.addTask {
                try await Task.sleep(until: deadline, clock: .continuous)
                throw SessionError.connectTimedOut(peer: "an awaited event", after: timeout)
            }
            defer { group.cancelAll() }
            guard let first = try await group.next(), let event = first else {
                throw SessionError.connectTimedOut(peer: "an awaited event", after: timeout)
            }
            return event
        }
    }

    func nextData() async throws -> ([UInt8], DataMode) {
        let event = try await next { if case .dataReceived = $0 { true } else { false } }
        guard case .dataReceived(let bytes, _, let mode) = event else { return ([], .reliable) }
        return (Array(bytes), mode)
    }
}

/// The session API in-process, on loopback, without multicast (peers are reached by address).
@Suite(.serialized, .timeLimit(.minutes(5))) struct SessionTests {
    static func configuration(
        _ name: String, mode: PeerMode = .peer, policy: AcceptPolicy = .all, maxPeers: Int = 16
    ) -> SessionConfiguration {
        var configuration = SessionConfiguration(
            sessionID: "unit", displayName: name, mode: mode,
            identity: TestIdentity.named(name), listenPort: 0,
            discoveryEnabled: false, acceptPolicy: policy, maxPeers: maxPeers)
        configuration.handshakeTimeout = TestIdentity.handshakeTimeout
        return configuration
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
                try await Session.run(configuration: Self.configuration("two", mode: .client), reactor: reactor) {
                    two in
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

    /// Issue 28, 10: a chat that dialled a stranger and whose person said no ends the link with goodbye 5
    /// `notAccepted`; the other session reports it as a deny by the user, as if it had been refused at its request.
    @Test func aLinkEndedAsNotAcceptedIsReportedAsADenyByTheUser() async throws {
        try await Self.withPair(bob: Self.configuration("bob")) { bob, alice in
            let bobEvents = EventReader(bob)
            let info = try await alice.connect(toAddress: await Self.address(of: bob))
            _ = try await bobEvents.next {
                if case .peerStateChanged(_, .connected, _) = $0 { true } else { false }
            }
            await alice.disconnect(info.peerID, notAccepted: "only trusted peers are accepted")
            let event = try await bobEvents.next {
                if case .peerStateChanged(_, .disconnected, _) = $0 { true } else { false }
            }
            guard case .peerStateChanged(_, _, let reason) = event else { return }
            #expect(reason == .denied(peer: "alice", reason: .deniedByUser, detail: "only trusted peers are accepted"))
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

/// A connection that fails says why in words a person can act on, naming the address once.
@Suite struct ConnectFailureTextTests {
    @Test func aPortWithNothingListeningSaysToStartAReceiver() async throws {
        let reactor = try Reactor()
        defer { reactor.shutdown() }
        // A port that was free a moment ago, closed again: nothing listens there.
        let listener = try reactor.listenTCP(on: .ipv4(.loopback, port: 0))
        let address = SocketAddress.ipv4(.loopback, port: listener.localAddress.port)
        listener.close()
        try await Session.run(configuration: SessionTests.configuration("alice"), reactor: reactor) { alice in
            let error = await #expect(throws: SessionError.self) { try await alice.connect(toAddress: address) }
            let text = error?.description ?? ""
            #expect(text.hasPrefix("could not reach \(address): nothing accepts connections"), "\(text)")
            #expect(text.contains("connection refused") && text.contains("start 'ferry receive' there"), "\(text)")
        }
    }

    @Test func noRouteSaysToCheckTheAddressAndOtherErrorsStayAsTheyAre() {
        let unreachable = SessionError.reaching(SystemError(call: "connect()", errno: .hostUnreachable))
        #expect(unreachable.hasPrefix("there is no route to that address ("), "\(unreachable)")
        #expect(unreachable.hasSuffix("check the address, and that this machine is on the same network"))
        #expect(
            SessionError.reaching(SystemError(call: "connect()", errno: .connectionReset))
                == "connect(): \(Errno.connectionReset)")
        #expect(
            SessionError.reaching(SystemError(call: "socket()", errno: .connectionRefused))
                == "socket(): \(Errno.connectionRefused)")
    }
}

/// A peer that completes the handshake, keeps sending heartbeats, and never reads again.
@Suite(.serialized, .timeLimit(.minutes(3))) struct StalledPeerTests {
    @Test func peerThatStopsReadingIsDisconnectedAndCloseStaysBounded() async throws {
        let reactor = try Reactor()
        defer { reactor.shutdown() }
        let listener = try reactor.listenTCP(on: .ipv4(.loopback, port: 0))
        defer { listener.close() }
        // Set when the fake peer stops on its own (an error of its own, the end of its input before the hello, or
        // cancelled): the sender must give up on it while it is still there, sending heartbeats, not because it went
        // away. A heartbeat write that fails does not set it: that is the sender's close reaching the fake, which on
        // a loaded machine can happen before this test reads the sender's disconnect event.
        let fakeEnded = Flag()
        let fake = Task {
            var closedBySender = false
            defer { if !closedBySender { fakeEnded.set() } }
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
                do {
                    try await link.write(SessionMessage.heartbeat(Heartbeat(sequence: sequence)).encoded())
                } catch {
                    closedBySender = true
                    return
                }
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
            let event = try await events.next {
                if case .peerStateChanged(_, .disconnected, _) = $0 { true } else { false }
            }
            guard case .peerStateChanged(let info, _, let reason) = event else { return }
            #expect(info.peerID == peer.peerID)
            #expect(!fakeEnded.isSet, "the fake peer ended before the sender gave up on it")
            // Never a goodbye: the writer's stall closed it ("lost"), or, on a machine so loaded that the fake's
            // heartbeats came late, the liveness timeout. Without the stall cut-off an unloaded run never ends
            // here (heartbeats keep arriving) and the wait above fails after 60 s.
            let text = reason?.description ?? ""
            #expect(text.contains("lost") || text.contains("no sign of life"), "\(text)")
            // The pusher ends too: every send either queued or failed once the peer was gone.
            let pushed = await pusher.result
            if case .success = pushed { Issue.record("64 MiB went to a peer that reads nothing") }
        }
        // Close is bounded: Session.run returned although the peer never read its goodbye.
    }
}

/// A flag one task sets and another reads.
final class Flag: @unchecked Sendable {
    private let lock = NSLock()
    private var value = false
    var isSet: Bool { lock.withLock { value } }
    func set() { lock.withLock { value = true } }
}

@Suite struct EventReaderTests {
    /// A wait on a stream that stays silent fails within its timeout instead of hanging the suite.
    @Test func aSilentStreamFailsTheWaitInsteadOfHanging() async throws {
        let reactor = try Reactor()
        defer { reactor.shutdown() }
        try await Session.run(configuration: SessionTests.configuration("alone"), reactor: reactor) { alone in
            let events = EventReader(alone)
            await #expect(throws: SessionError.self) {
                _ = try await events.next(timeout: .milliseconds(300)) {
                    if case .dataReceived = $0 { true } else { false }
                }
            }
        }
    }
}
