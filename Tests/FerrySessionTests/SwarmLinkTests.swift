import FerrySecurity
import FerryStateMachines
import FerrySystem
import FerryTestSupport
import FerryWire
import Testing

@testable import FerrySession

/// Issue 12, session links between the recipients of one broadcast: a vouched device is admitted without a prompt
/// under policies that would ask or refuse it, nobody else is; a member dialled at an address is pinned to its
/// device ID; a revoked vouch admits nothing new; two members dialling each other at once keep one link; a swarm
/// link carries no offer the ordinary rules would refuse. Each test fails when its mechanism is taken out.
@Suite(.serialized, .timeLimit(.minutes(5))) struct SwarmLinkTests {
    static let alice = TestIdentity.named("alice")
    static let bob = TestIdentity.named("bob")
    static let carol = TestIdentity.named("carol")

    static func configuration(
        _ name: String, policy: AcceptPolicy, transfers: Bool = false, maxPeers: Int = 16
    ) -> SessionConfiguration {
        var configuration = SessionTests.configuration(name, policy: policy, maxPeers: maxPeers)
        configuration.transfersEnabled = transfers
        return configuration
    }

    /// A prompt, or a peer connected: what a vouched request must not lead to, and must.
    static func isRequestOrConnection(_ event: SessionEvent) -> Bool {
        if case .connectionRequested = event { return true }
        if case .peerStateChanged(_, .connected, _) = event { return true }
        return false
    }

    // MARK: Admission

    @Test(arguments: [AcceptPolicy.ask, .trusted])
    func aVouchedMemberConnectsWithoutAPromptWhereOthersAreAskedOrRefused(policy: AcceptPolicy) async throws {
        try await withSession(Self.configuration("bob", policy: policy)) { bob, address, reactor in
            let events = EventReader(bob)
            _ = await bob.vouch(for: [Self.alice.deviceID], reason: "a broadcast alice is named in")
            // Alice takes no connections herself: dialling a member needs only her own vouch.
            try await Session.run(configuration: Self.configuration("alice", policy: .none), reactor: reactor) {
                alice in
                _ = await alice.vouch(for: [Self.bob.deviceID], reason: "the same broadcast")
                async let connected = alice.connect(toMember: Self.bob.deviceID, at: address)
                let first = try await events.next(where: Self.isRequestOrConnection)
                guard case .peerStateChanged(let peer, .connected, _) = first else {
                    Issue.record("a vouched member was not admitted by itself: \(first)")
                    if case .connectionRequested(let asking) = first { await bob.deny(asking.peerID) }
                    _ = try? await connected
                    return
                }
                let member = try await connected
                #expect(member.isSwarmLink && member.deviceID == Self.bob.deviceID)
                #expect(peer.deviceID == Self.alice.deviceID && peer.isSwarmLink && !peer.isTrusted)
                #expect(await bob.statistics.requestsRateLimited == 0)
            }
            // Mallory dials as a member would, but Bob vouched for nobody of hers: today's rules.
            try await Session.run(configuration: Self.configuration("mallory", policy: .none), reactor: reactor) {
                mallory in
                _ = await mallory.vouch(for: [Self.bob.deviceID], reason: "she says so")
                switch policy {
                case .ask:
                    async let refused = (try? await mallory.connect(toMember: Self.bob.deviceID, at: address)) == nil
                    let next = try await events.next(where: Self.isRequestOrConnection)
                    guard case .connectionRequested(let peer) = next else {
                        Issue.record("an unvouched device was not asked about: \(next)")
                        return
                    }
                    #expect(peer.displayName == "mallory" && !peer.isSwarmLink)
                    await bob.deny(peer.peerID)
                    #expect(await refused)
                default:
                    await #expect(
                        throws: SessionError.denied(
                            peer: "bob", reason: .untrusted,
                            detail: "only trusted peers are accepted")
                    ) {
                        try await mallory.connect(toMember: Self.bob.deviceID, at: address)
                    }
                }
            }
        }
    }

    /// `none` is the one policy a vouch does not open (docs/SECURITY.md "Swarm links"): such a member dials out.
    @Test func acceptNoneRefusesEvenAVouchedDevice() async throws {
        try await withSession(Self.configuration("bob", policy: .none)) { bob, address, reactor in
            _ = await bob.vouch(for: [Self.alice.deviceID], reason: "a broadcast")
            try await Session.run(configuration: Self.configuration("alice", policy: .all), reactor: reactor) {
                alice in
                _ = await alice.vouch(for: [Self.bob.deviceID], reason: "a broadcast")
                await #expect(
                    throws: SessionError.denied(
                        peer: "bob", reason: .deniedByUser,
                        detail: "")
                ) {
                    try await alice.connect(toMember: Self.bob.deviceID, at: address)
                }
                // The other way round it works: Bob dials Alice, who vouches for him.
                let aliceAddress = await SessionTests.address(of: alice)
                let member = try await bob.connect(toMember: Self.alice.deviceID, at: aliceAddress)
                #expect(member.isSwarmLink && member.displayName == "alice")
            }
        }
    }

    /// A broadcast to many must not lock the receiver's owner out, nor be cut at `maxPeers`.
    @Test func swarmLinksNeitherFillNorAreLimitedByMaxPeers() async throws {
        try await withSession(Self.configuration("bob", policy: .all, maxPeers: 1)) { bob, address, reactor in
            try await Session.run(configuration: Self.configuration("carol", policy: .none), reactor: reactor) {
                carol in
                try await carol.connect(toAddress: address)  // 1 of 1
                try await Session.run(configuration: Self.configuration("alice", policy: .none), reactor: reactor) {
                    alice in
                    _ = await bob.vouch(for: [Self.alice.deviceID], reason: "a broadcast")
                    _ = await alice.vouch(for: [Self.bob.deviceID], reason: "a broadcast")
                    let member = try await alice.connect(toMember: Self.bob.deviceID, at: address)
                    #expect(member.isSwarmLink, "admitted although bob is full")
                    try await Session.run(
                        configuration: Self.configuration("dave", policy: .none), reactor: reactor
                    ) { dave in
                        await #expect(
                            throws: SessionError.denied(
                                peer: "bob", reason: .serverFull, detail: "1 of 1 peers connected")
                        ) {
                            try await dave.connect(toAddress: address)
                        }
                        await carol.disconnect(bob.localPeerID)
                        try await Self.waitUntil("carol gone") {
                            await bob.peers(withState: .connected).map(\.displayName) == ["alice"]
                        }
                        // Alice's swarm link is still up, and takes no place of the one.
                        let bobInfo = try await dave.connect(toAddress: address)
                        #expect(!bobInfo.isSwarmLink)
                    }
                    #expect(await bob.peer(alice.localPeerID)?.state == .connected)
                }
            }
        }
    }

    // MARK: Pinning

    @Test func aMemberDialledWhereAnotherDeviceAnswersIsRefusedWithTheMismatch() async throws {
        // Bob accepts everyone: only the pin can keep Alice from connecting to him when she expects Carol.
        try await withSession(Self.configuration("bob", policy: .all)) { bob, address, reactor in
            let events = EventReader(bob)
            try await Session.run(configuration: Self.configuration("alice", policy: .none), reactor: reactor) {
                alice in
                await #expect(throws: SessionError.notVouched(Self.carol.deviceID)) {
                    try await alice.connect(toMember: Self.carol.deviceID, at: address)
                }
                _ = await alice.vouch(for: [Self.carol.deviceID, Self.bob.deviceID], reason: "a broadcast")
                await #expect(
                    throws: SessionError.unexpectedDevice(
                        address: address.description, expected: Self.carol.deviceID, presented: Self.bob.deviceID)
                ) {
                    try await alice.connect(toMember: Self.carol.deviceID, at: address)
                }
                #expect(await alice.peers(withState: .connected).isEmpty)
                #expect(await alice.statistics.linksUnauthenticated == 1)
                // Refused on Bob's hello, before any request: Bob connected nobody. Then the right member connects.
                let member = try await alice.connect(toMember: Self.bob.deviceID, at: address)
                #expect(member.deviceID == Self.bob.deviceID && member.isSwarmLink)
                let first = try await events.next(where: Self.isRequestOrConnection)
                guard case .peerStateChanged(let peer, .connected, _) = first else {
                    Issue.record("unexpected \(first)")
                    return
                }
                #expect(peer.displayName == "alice")
                #expect(await bob.statistics.linksAccepted == 2)
            }
        }
    }

    // MARK: Revoking

    @Test func aRevokedVouchAdmitsNothingNewAndClosesNothingOpen() async throws {
        try await withSession(Self.configuration("bob", policy: .trusted)) { bob, address, reactor in
            let events = EventReader(bob)
            let token = await bob.vouch(for: [Self.alice.deviceID], reason: "a broadcast")
            try await Session.run(configuration: Self.configuration("alice", policy: .none), reactor: reactor) {
                alice in
                _ = await alice.vouch(for: [Self.bob.deviceID], reason: "a broadcast")
                let member = try await alice.connect(toMember: Self.bob.deviceID, at: address)
                bob.revoke(token)
                #expect(await !bob.isVouched(Self.alice.deviceID))
                // The open link stays: a message still arrives over it.
                try await alice.send([42], to: [member.peerID])
                let (bytes, _) = try await events.nextData()
                #expect(bytes == [42])
                #expect(await bob.peer(alice.localPeerID)?.state == .connected)
                // A new link from the same device: untrusted again.
                try await Session.run(configuration: Self.configuration("alice", policy: .none), reactor: reactor) {
                    again in
                    _ = await again.vouch(for: [Self.bob.deviceID], reason: "a broadcast")
                    await #expect(
                        throws: SessionError.denied(
                            peer: "bob", reason: .untrusted,
                            detail: "only trusted peers are accepted")
                    ) {
                        try await again.connect(toMember: Self.bob.deviceID, at: address)
                    }
                }
                #expect(await bob.peers(withState: .connected).map(\.peerID) == [alice.localPeerID])
            }
        }
    }

    // MARK: Duplicate links (PROTOCOL.md 10.4)

    /// Waits (without blocking a thread) until `condition` holds; fails the test after `timeout`.
    static func waitUntil(
        _ what: String, timeout: Duration = .seconds(30), _ condition: () async -> Bool
    ) async throws {
        let deadline = ContinuousClock.now + timeout
        while await !condition() {
            guard ContinuousClock.now < deadline else {
                throw WaitTimedOut(description: "not within \(timeout): \(what)")
            }
            try await Task.sleep(for: .milliseconds(10))
        }
    }

    @Test func membersDiallingEachOtherAtOnceKeepOneLink() async throws {
        try await SessionTests.withPair(
            bob: Self.configuration("bob", policy: .trusted), alice: Self.configuration("alice", policy: .trusted)
        ) { bob, alice in
            let bobAddress = await SessionTests.address(of: bob)
            let aliceAddress = await SessionTests.address(of: alice)
            _ = await bob.vouch(for: [Self.alice.deviceID], reason: "a broadcast")
            _ = await alice.vouch(for: [Self.bob.deviceID], reason: "a broadcast")
            let bobEvents = EventReader(bob)
            for round in 0..<6 {
                async let fromAlice = alice.connect(toMember: Self.bob.deviceID, at: bobAddress)
                async let fromBob = bob.connect(toMember: Self.alice.deviceID, at: aliceAddress)
                let (seenByAlice, seenByBob) = try await (fromAlice, fromBob)
                #expect(seenByAlice.peerID == bob.localPeerID && seenByBob.peerID == alice.localPeerID)
                // Either both links connected and both sides closed the one opened by the higher peer ID, or one
                // connected first and the other request was denied `alreadyConnected` (10.4). Either way each side
                // then holds one link, and it is the same one: its initiator on one side is its acceptor on the other.
                try await Self.waitUntil("one link on each side, round \(round)") {
                    let (atAlice, atBob) = (await alice.links.count, await bob.links.count)
                    return atAlice == 1 && atBob == 1
                }
                let aliceLink = try #require(await alice.links.values.first)
                let bobLink = try #require(await bob.links.values.first)
                #expect(aliceLink.isAcceptor != bobLink.isAcceptor, "round \(round): the two sides kept other links")
                #expect(aliceLink.isSwarm && bobLink.isSwarm)
                #expect(await alice.peer(bob.localPeerID)?.isSwarmLink == true)
                #expect(await bob.peer(alice.localPeerID)?.isSwarmLink == true)
                try await alice.send([UInt8(round)], to: [bob.localPeerID])
                let (bytes, _) = try await bobEvents.nextData()
                #expect(bytes == [UInt8(round)])
                await alice.disconnect(bob.localPeerID)
                try await Self.waitUntil("both links gone, round \(round)") {
                    let (atAlice, atBob) = (await alice.links.count, await bob.links.count)
                    let stillConnected = await alice.peers(withState: .connected) + bob.peers(withState: .connected)
                    return atAlice == 0 && atBob == 0 && stillConnected.isEmpty
                }
            }
        }
    }

    // MARK: A link, nothing else

    @Test(arguments: [AcceptPolicy.trusted, .all])
    func anOfferOnASwarmLinkIsJudgedAsIfTheVouchDidNotExist(policy: AcceptPolicy) async throws {
        try await withSession(Self.configuration("bob", policy: policy, transfers: true)) { bob, address, reactor in
            let frames = StreamReader(bob.transferEvents)
            _ = await bob.vouch(for: [Self.alice.deviceID], reason: "a broadcast")
            try await Session.run(
                configuration: Self.configuration("alice", policy: .none, transfers: true), reactor: reactor
            ) { alice in
                let events = EventReader(alice)
                _ = await alice.vouch(for: [Self.bob.deviceID], reason: "a broadcast")
                let member = try await alice.connect(toMember: Self.bob.deviceID, at: address)
                // What members exchange passes (here a chunkAck stands for the swarm's frames)...
                let ack = Frame(kind: .chunkAck, payload: [1, 2, 3])
                try await alice.sendTransferFrame([ack.encoded()], to: member.peerID)
                let offer = Frame(kind: .offer, payload: [4, 5, 6])
                try await alice.sendTransferFrame([offer.encoded()], to: member.peerID)
                guard case .frame(let first, _) = try await frames.next() else {
                    Issue.record("the swarm's frame did not arrive")
                    return
                }
                #expect(first == ack)
                let second = try await frames.next()
                switch (policy, second) {
                case (.all, .frame(let frame, _)):
                    // ...and under --accept all an offer would have been taken from anyone anyway.
                    #expect(frame == offer)
                case (.trusted, .peerDisconnected):
                    // ...but an unpinned member offering to a trusted-only receiver is cut off.
                    let end = try await events.next {
                        if case .peerStateChanged(_, .disconnected, _) = $0 { true } else { false }
                    }
                    guard case .peerStateChanged(_, _, let reason?) = end else { return }
                    #expect("\(reason)".contains("admitted for a broadcast swarm only"), "\(reason)")
                default:
                    Issue.record("under \(policy): \(second)")
                }
            }
        }
    }
}

/// A condition a test waited for did not come true in time.
struct WaitTimedOut: Error, CustomStringConvertible {
    var description: String
}

/// Reads an `AsyncStream` in order with a generous upper bound on each wait (see `EventReader`).
final class StreamReader<Element: Sendable>: @unchecked Sendable {
    // Only the test's own task touches the iterator, one call at a time.
    private var iterator: AsyncStream<Element>.Iterator?
    private var channelIterator: AsyncChannel<Element>.AsyncIterator?

    init(_ stream: AsyncStream<Element>) {
        iterator = stream.makeAsyncIterator()
    }

    init(_ channel: AsyncChannel<Element>) {
        channelIterator = channel.makeAsyncIterator()
    }

    private func nextElement() async -> Element? {
        if iterator != nil { return await iterator!.next() }
        return await channelIterator!.next()
    }

    /// The next element; throws when none arrives within `timeout` or the stream ends.
    func next(timeout: Duration = .seconds(60)) async throws -> Element {
        try await withThrowingTaskGroup(of: Element?.self) { group in
            group.addTask { await self.nextElement() }
            group.addTask {
                try await Task.sleep(for: timeout)
                return nil
            }
            defer { group.cancelAll() }
            guard let first = try await group.next(), let element = first else {
                throw SessionError.connectTimedOut(peer: "an awaited element", after: timeout)
            }
            return element
        }
    }
}
