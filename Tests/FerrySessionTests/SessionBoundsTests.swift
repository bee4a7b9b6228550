import FerrySecurity
import FerryStateMachines
import FerrySystem
import FerryTestSupport
import FerryWire
import Synchronization
import Testing

@testable import FerrySession

/// Promise 4, in-process: what a stranger can make a session hold or show before it is accepted.
@Suite(.serialized, .timeLimit(.minutes(5))) struct SessionBoundsTests {
    /// Plain TCP links from `sources` that send nothing; returns once the session adopted each (sent its preface).
    static func stalledLinks(from sources: [String], to port: UInt16) async throws -> [LoopbackSocket] {
        let clients = try await onOwnThread {
            try sources.map { try LoopbackSocket.connect(port: port, from: $0, receiveTimeoutSeconds: 30) }
        }
        for client in clients {
            let preface = try await onOwnThread { client.read(upTo: Preface.length) }
            #expect(preface == Preface.encode(), "the session adopted the link and began its handshake")
        }
        return clients
    }

    static func isRequest(from name: String) -> @Sendable (SessionEvent) -> Bool {
        { event in
            if case .connectionRequested(let peer) = event { return peer.displayName == name }
            return false
        }
    }

    @Test func oneAddressCannotPushOutOtherHostsHandshakes() async throws {
        var configuration = SessionTests.configuration("bob")
        configuration.maxPendingLinks = 6
        configuration.maxPendingLinksPerAddress = 3
        try await withSession(configuration) { bob, address, reactor in
            let port = await bob.listenPort
            let stalled = try await Self.stalledLinks(
                from: ["127.0.0.2", "127.0.0.2", "127.0.0.2", "127.0.0.3", "127.0.0.3"], to: port)
            defer { stalled.forEach { $0.close() } }
            // A fourth from the same host is closed at once: not a preface, not a TLS byte, nobody else evicted.
            let refused = try await onOwnThread {
                try LoopbackSocket.connect(port: port, from: "127.0.0.2", receiveTimeoutSeconds: 30)
            }
            defer { refused.close() }
            #expect(try await onOwnThread { refused.read(upTo: 64) } == [])
            var statistics = await bob.statistics
            #expect(statistics.linksRefusedPerAddress == 1)
            #expect(statistics.linksEvicted == 0)
            // Another host is served.
            try await Session.run(configuration: SessionTests.configuration("alice"), reactor: reactor) { alice in
                let info = try await alice.connect(toAddress: .ipv4(.loopback, port: port))
                #expect(info.displayName == "bob")
            }
            statistics = await bob.statistics
            #expect(statistics.linksRefusedPerAddress == 1)
            #expect(statistics.linksEvicted == 0)
        }
    }

    /// Strangers that complete the handshake and then break the protocol (an oversized hello) get their link
    /// closed; while a closed link drains, its descriptor stays open, and those of links never admitted are kept to
    /// `maxPendingLinks` at once: beyond, the oldest drain is cut. The deadlines are held, so only the bound can
    /// close them (without it, all 20 stay open).
    @Test func linksClosedBeforeAdmissionDrainAtMostMaxPendingLinksAtOnce() async throws {
        var configuration = SessionTests.configuration("bob")
        configuration.maxPendingLinks = 6
        configuration.maxPendingLinksPerAddress = 6
        try await withSession(configuration) { bob, _, _ in
            await bob.holdClosingDeadlines()
            let port = Int(await bob.listenPort)
            let oversized: [UInt8] = [0x00, 0x01, 0x00, 0x00, 0x04, 0x01] + [UInt8](repeating: 0, count: 1025)
            var strangers: [StrangerLink] = []
            defer { strangers.forEach { $0.close() } }
            for _ in 0..<20 {
                let stranger = try await StrangerLink.open(port: port)
                strangers.append(stranger)
                try await stranger.send(oversized)
            }
            // Each is closed by bob once its frame header is read: wait for all 20 (a deadline, not a timing).
            let clock = ContinuousClock()
            let deadline = clock.now + .seconds(60)
            var counted = (draining: 0, cut: 0)
            while clock.now < deadline {
                counted = (await bob.closingStreams.count, await bob.statistics.closingLinksCut)
                if counted.draining + counted.cut >= 20 { break }
                try await Task.sleep(for: .milliseconds(10))
            }
            #expect(counted.draining + counted.cut == 20, "\(counted)")
            #expect(counted.draining <= 6, "\(counted.draining) closed links held open")
            #expect(counted.cut >= 14)
        }
    }

    @Test func evictedRequestsLeaveNoPeerBehind() async throws {
        var configuration = SessionTests.configuration("bob", policy: .ask)
        configuration.maxPendingLinks = 3
        try await withSession(configuration) { bob, address, reactor in
            let events = EventReader(bob)
            var strangers: [StrangerLink] = []
            defer { strangers.forEach { $0.close() } }
            for name in ["stranger1", "stranger2"] {
                let stranger = try await StrangerLink.open(port: Int(address.port))
                strangers.append(stranger)
                try await stranger.send(
                    stranger.hello(name: name)
                        + SessionMessage.connectionRequest.encoded())
                _ = try await events.next(where: Self.isRequest(from: name))
            }
            #expect(await bob.peers().count == 2)
            // Three more pending links: the two requests are the oldest and go.
            let stalled = try await Self.stalledLinks(from: ["127.0.0.4", "127.0.0.4", "127.0.0.4"], to: address.port)
            defer { stalled.forEach { $0.close() } }
            #expect(await bob.statistics.linksEvicted == 2)
            #expect(await bob.peers().isEmpty, "an evicted request must not keep its peer in the table")
            for stranger in strangers {
                #expect(await stranger.messagesUntilClosed().closedByPeer)
            }
        }
    }

    @Test func aHelloFloodOfNewDevicesNeverGrowsThePeerTable() async throws {
        var configuration = SessionTests.configuration("bob", policy: .none)
        configuration.maxPendingLinks = 4
        try await withSession(configuration) { bob, address, reactor in
            var idle: [StrangerLink] = []
            defer { idle.forEach { $0.close() } }
            for index in 0..<40 {
                let stranger = try await StrangerLink.open(port: Int(address.port))
                let hello = stranger.hello(name: "flood\(index)")
                if index % 4 == 0 {
                    // Some say hello and sit there; they are held only while fewer than 4 links are pending.
                    try await stranger.send(hello)
                    idle.append(stranger)
                    continue
                }
                try await stranger.send(hello + SessionMessage.connectionRequest.encoded())
                let (messages, closed) = await stranger.messagesUntilClosed()
                stranger.close()
                #expect(closed && messages.contains { if case .deny = $0 { true } else { false } })
                #expect(await bob.peers().count <= 4, "after stranger \(index)")
            }
            #expect(await bob.peers().count <= 4)
        }
    }

    /// A refused request's deny goes out even when the link's writer lags past the close grace (a loaded machine):
    /// the grace is the peer's time to read our last frames, so it counts from when they were written. The writer is
    /// held with the deny queued and the session ticked past the grace; without the fix the tick closed the stream
    /// and the stranger saw the link end without its deny (the flake of `aHelloFloodOfNewDevicesNeverGrowsThePeerTable`).
    @Test func aDenyStillQueuedWhenTheCloseGraceEndsIsDelivered() async throws {
        try await withSession(SessionTests.configuration("bob", policy: .none)) { bob, address, _ in
            let stranger = try await StrangerLink.open(port: Int(address.port))
            defer { stranger.close() }
            // The stranger's handshake is done, so bob adopted its link.
            let link = await bob.links.first.map { ($0.key, $0.value.writer) }
            guard let (id, writer) = link else {
                Issue.record("bob adopted no link")
                return
            }
            writer.hold(throughFinish: true)
            try await stranger.send(stranger.hello(name: "late") + SessionMessage.connectionRequest.encoded())
            let clock = ContinuousClock()
            let patience = clock.now + .seconds(60)  // the test's patience, not a timing
            while await bob.links[id] != nil, clock.now < patience {
                try await Task.sleep(for: .milliseconds(10))
            }
            #expect(await bob.isDraining(id), "bob denied the request and drains the link, the deny held")
            await bob.tick(now: clock.now + Session.closeGrace + .seconds(1))
            #expect(await bob.isDraining(id), "the grace counts from our last frame written, not from the close")
            writer.resume()
            let (messages, closed) = await stranger.messagesUntilClosed()
            #expect(closed && messages.contains { if case .deny = $0 { true } else { false } }, "\(messages)")
        }
    }

    /// A TLS client to `address` whose preface and ClientHello pass and whose Certificate and Finished never
    /// arrive: the session waits mid-handshake.
    static func stalledHandshake(to address: SocketAddress, reactor: Reactor) async throws -> TLSStream {
        let tcp = try await reactor.connectTCP(to: address, timeout: .seconds(30))
        let stream = try TLSStream(
            over: SwallowingStream(tcp, passing: 2), context: TLSContext(identity: DeviceIdentity.generate()),
            role: .client)
        do {
            try await stream.handshake()
        } catch {
            stream.close()
            throw error
        }
        return stream
    }

    /// The configured handshake deadline is what closes a stalled link, and nothing earlier: a session with a 600 s
    /// deadline gets a stalled link first, then one with a 2 s deadline gets another. The second is closed, for the
    /// handshake timeout, while the first is still held: one deadline for both (a constant instead of the
    /// configuration) would have closed the older link first.
    @Test func aLinkStalledMidHandshakeIsClosedByTheHandshakeDeadline() async throws {
        var patientConfiguration = SessionTests.configuration("patient")
        patientConfiguration.handshakeTimeout = .seconds(600)
        var configuration = SessionTests.configuration("bob")
        configuration.handshakeTimeout = .seconds(2)
        let log = Mutex<[String]>([])
        configuration.log = { _, message in log.withLock { $0.append(message) } }
        try await withSession(patientConfiguration) { patient, patientAddress, reactor in
            let patientStream = try await Self.stalledHandshake(to: patientAddress, reactor: reactor)
            defer { patientStream.close() }
            #expect(await patient.links.count == 1)
            try await withSession(configuration) { bob, address, _ in
                let stream = try await Self.stalledHandshake(to: address, reactor: reactor)
                defer { stream.close() }
                #expect(await bob.links.count == 1)
                // 60 s is only the test's patience.
                let expired = Mutex(false)
                let watchdog = Task {
                    try await reactor.sleep(until: .now + .seconds(60))
                    expired.withLock { $0 = true }
                    stream.close()
                }
                defer { watchdog.cancel() }
                let bytes = try? await stream.read(maxBytes: 1024)
                #expect(bytes?.isEmpty != false, "nothing but the end of the link")
                #expect(!expired.withLock { $0 }, "the session closed the link, not the test's patience")
                #expect(await bob.links.isEmpty, "the session let go of the stalled link")
                #expect(await bob.peers().isEmpty)
                let closings = log.withLock { $0 }.filter { $0.contains(" closed: ") }
                #expect(
                    closings.count == 1 && closings.allSatisfy { $0.hasSuffix("closed: timed out (handshake)") },
                    "\(closings)")
                #expect(await patient.links.count == 1, "the 600 s deadline has not closed the older stalled link")
            }
        }
    }

    @Test func aStrangerUsingAConnectedPeersIDDoesNotRewriteThatPeer() async throws {
        try await withSession(SessionTests.configuration("bob")) { bob, address, reactor in
            try await Session.run(configuration: SessionTests.configuration("alice"), reactor: reactor) { alice in
                try await alice.connect(toAddress: address)
                let aliceID = alice.localPeerID
                let stranger = try await StrangerLink.open(port: Int(address.port))
                defer { stranger.close() }
                // Peer IDs travel in beacons: anyone on the network can learn a connected peer's.
                try await stranger.send(
                    stranger.hello(peerID: aliceID.rawValue, name: "mallory")
                        + SessionMessage.connectionRequest.encoded())
                #expect(await stranger.messagesUntilClosed().closedByPeer)
                let record = await bob.peer(aliceID)
                #expect(record?.displayName == "alice")
                #expect(record?.deviceID == alice.configuration.deviceID)
            }
        }
    }

    @Test func promptsBeyondTheRateAreDeniedWithoutAnEvent() async throws {
        var configuration = SessionTests.configuration("bob", policy: .ask)
        configuration.connectionRequestRate = RateLimit(burst: 2, per: .seconds(3600))
        try await withSession(configuration) { bob, address, reactor in
            let events = EventReader(bob)
            let configurations = ["first", "second", "third"].map { SessionTests.configuration($0) }
            try await Session.run(configuration: configurations[0], reactor: reactor) { first in
                try await Session.run(configuration: configurations[1], reactor: reactor) { second in
                    try await Session.run(configuration: configurations[2], reactor: reactor) { third in
                        let firstConnect = Task { try await first.connect(toAddress: address) }
                        let request = try await events.next(where: Self.isRequest(from: "first"))
                        let secondConnect = Task { try await second.connect(toAddress: address) }
                        _ = try await events.next(where: Self.isRequest(from: "second"))
                        await #expect(
                            throws: SessionError.denied(
                                peer: "bob", reason: .notAccepting, detail: "too many requests, try again later")
                        ) {
                            try await third.connect(toAddress: address)
                        }
                        #expect(await bob.statistics.requestsRateLimited == 1)
                        // Events are in order: a prompt for the third would have come before first's connection.
                        guard case .connectionRequested(let who) = request else { return }
                        try await bob.accept(who.peerID)
                        let seen = try await events.next { event in
                            if case .connectionRequested = event { return true }
                            if case .peerStateChanged(let peer, .connected, _) = event {
                                return peer.displayName == "first"
                            }
                            return false
                        }
                        #expect(!Self.isRequest(from: "third")(seen), "no prompt for the third request")
                        #expect(try await firstConnect.value.displayName == "bob")
                        secondConnect.cancel()
                        _ = await secondConnect.result
                    }
                }
            }
        }
    }

    @Test func oneNoisyPeerUsesUpOnlyItsOwnPrompts() async throws {
        var configuration = SessionTests.configuration("bob", policy: .ask)
        configuration.connectionRequestRatePerPeer = RateLimit(burst: 1, per: .seconds(3600))
        try await withSession(configuration) { bob, address, reactor in
            let events = EventReader(bob)
            // The same device (the same identity) asks twice, from two sessions one after the other.
            for attempt in 0..<2 {
                try await Session.run(configuration: SessionTests.configuration("noisy"), reactor: reactor) { noisy in
                    if attempt == 0 {
                        let connect = Task { try await noisy.connect(toAddress: address) }
                        let request = try await events.next(where: Self.isRequest(from: "noisy"))
                        guard case .connectionRequested(let who) = request else { return }
                        await bob.deny(who.peerID)
                        _ = await connect.result
                    } else {
                        await #expect(
                            throws: SessionError.denied(
                                peer: "bob", reason: .notAccepting, detail: "too many requests, try again later")
                        ) {
                            try await noisy.connect(toAddress: address)
                        }
                    }
                }
            }
            // Someone else is still asked.
            try await Session.run(configuration: SessionTests.configuration("polite"), reactor: reactor) { polite in
                let connect = Task { try await polite.connect(toAddress: address) }
                let request = try await events.next { event in
                    if case .connectionRequested = event { return true }
                    return false
                }
                #expect(Self.isRequest(from: "polite")(request))
                guard case .connectionRequested(let who) = request else { return }
                try await bob.accept(who.peerID)
                #expect(try await connect.value.displayName == "bob")
            }
            #expect(await bob.statistics.requestsRateLimited == 1)
        }
    }
}
