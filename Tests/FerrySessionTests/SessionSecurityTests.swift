import FerrySecurity
import FerryStateMachines
import FerrySystem
import FerryTestSupport
import FerryWire
import Testing

@testable import FerrySession

/// Issue 4, in-process: sealed datagrams, the hello checked against the certificate and against discovery, pinned
/// names, `AcceptPolicy.trusted` and pairing codes. Each test fails if its mechanism is taken out.
@Suite(.serialized) struct SessionSecurityTests {
    static let alice = TestIdentity.named("alice")
    static let bob = TestIdentity.named("bob")
    static let mallory = TestIdentity.named("mallory")

    static func configuration(
        _ name: String, identity: DeviceIdentity, policy: AcceptPolicy = .all, trusting: [DeviceID: String] = [:]
    ) -> SessionConfiguration {
        var configuration = SessionTests.configuration(name, policy: policy)
        configuration.identity = identity
        configuration.trustedDevices = trusting
        return configuration
    }

    /// A session error, or a peer connected (what a missing check would lead to instead: fail fast).
    static func isSessionErrorOrConnection(_ event: SessionEvent) -> Bool {
        if case .sessionError = event { return true }
        if case .peerStateChanged(_, .connected, _) = event { return true }
        return false
    }

    // MARK: Hello and certificate (PROTOCOL 10.8, check 1)

    @Test(.timeLimit(.minutes(1)))
    func aHelloClaimingAnotherDeviceThanItsCertificateIsRefused() async throws {
        try await withSession(Self.configuration("bob", identity: Self.bob)) { bob, address, reactor in
            let stranger = try await StrangerLink.open(port: Int(address.port))
            defer { stranger.close() }
            // Alice's device ID is public (beacons, hellos); her private key is not.
            let claimed = Self.alice.deviceID
            try await stranger.send(
                stranger.hello(name: "alice", deviceID: claimed)
                    + SessionMessage.connectionRequest.encoded())
            let (messages, closedByPeer) = await stranger.messagesUntilClosed()
            #expect(closedByPeer)
            let goodbyes = messages.compactMap { message -> Goodbye? in
                if case .goodbye(let goodbye) = message { return goodbye }
                return nil
            }
            #expect(goodbyes.count == 1)
            #expect(goodbyes.first?.reason == .disconnected)
            #expect(
                goodbyes.first?.detail.contains("certificate is \(stranger.identity.deviceID.shortDescription)") == true
            )
            #expect(!messages.contains(.accept))
            #expect(await bob.statistics.linksUnauthenticated == 1)
            #expect(await bob.peers().isEmpty)
        }
    }

    // MARK: Discovery against the certificate (PROTOCOL 10.8, check 2)

    @Test(.timeLimit(.minutes(1)))
    func aPeerDiscoveredWithOneDeviceIDCannotBeAnsweredByAnother() async throws {
        try await withSession(Self.configuration("bob", identity: Self.bob)) { bob, address, reactor in
            try await Session.run(
                configuration: Self.configuration("alice", identity: Self.alice), reactor: reactor
            ) { alice in
                // A beacon announces "carol" (Mallory's device ID as hers) at the address where Bob answers.
                let carolID = PeerID(rawValue: .random(in: 1...UInt64.max))
                let beacon = Beacon(
                    flags: [.available], mode: .peer, peerID: carolID, deviceID: Self.mallory.deviceID,
                    tcpPort: address.port, sessionID: "unit", displayName: "carol")
                await alice.beaconArrived(beacon.encoded(), from: .ipv4(.loopback, port: Discovery.port))
                #expect(await alice.peer(carolID)?.address == address)
                do {
                    try await alice.connect(to: carolID, timeout: .seconds(30))
                    Issue.record("connected to a peer whose certificate is not the one discovery announced")
                } catch let SessionError.authenticationFailed(_, detail) {
                    #expect(detail.contains(Self.bob.deviceID.shortDescription))
                } catch {
                    Issue.record("unexpected error \(error)")
                }
                #expect(await alice.statistics.linksUnauthenticated == 1)
                #expect(await alice.peers(withState: .connected).isEmpty)
                let record = await alice.peer(carolID)
                #expect(record?.state == .available, "the discovered peer is kept, no longer connecting")
                #expect(record?.deviceID == Self.mallory.deviceID, "and keeps the device ID discovery announced")
                #expect(await alice.peer(bob.localPeerID) == nil, "the answering peer is not taken in")
                // Alice refused on Bob's hello, before her connection request: Bob never connected.
                #expect(await bob.peers(withState: .connected).isEmpty)
            }
        }
    }

    // MARK: Pinned names (PROTOCOL 10.8, check 3)

    @Test(.timeLimit(.minutes(1)))
    func aPinnedNameWithAnotherKeyIsRefusedAndTheRealPeerIsTrusted() async throws {
        let bobConfiguration = Self.configuration("bob", identity: Self.bob, trusting: [Self.alice.deviceID: "alice"])
        try await withSession(bobConfiguration) { bob, address, reactor in
            let events = EventReader(bob)
            try await Session.run(
                configuration: Self.configuration(" ALICE ", identity: Self.mallory), reactor: reactor
            ) { impostor in
                do {
                    try await impostor.connect(toAddress: address)
                    Issue.record("an impostor of a pinned name was accepted")
                } catch {
                    #expect("\(error)".contains("pinned to another key"), "the goodbye says why: \(error)")
                }
                let event = try await events.next(where: Self.isSessionErrorOrConnection)
                guard case .sessionError(let error) = event else {
                    Issue.record("no warning before \(event)")
                    return
                }
                #expect(
                    error
                        == .pinnedKeyChanged(
                            name: " ALICE ", pinned: Self.alice.deviceID, presented: Self.mallory.deviceID))
                #expect(await bob.statistics.linksUnauthenticated == 1)
                #expect(await bob.peers(withState: .connected).isEmpty)
            }
            try await Session.run(configuration: Self.configuration("alice", identity: Self.alice), reactor: reactor) {
                alice in
                let bobInfo = try await alice.connect(toAddress: address)
                #expect(!bobInfo.isTrusted, "alice pinned nobody")
                #expect(await bob.peer(alice.localPeerID)?.isTrusted == true)
                await bob.untrust(Self.alice.deviceID)
                #expect(await bob.peer(alice.localPeerID)?.isTrusted == false)
                await bob.trust(Self.alice.deviceID, name: "alice")
                #expect(await bob.peer(alice.localPeerID)?.isTrusted == true)
                await alice.trust(Self.bob.deviceID, name: "bob")
                #expect(await alice.peer(bobInfo.peerID)?.isTrusted == true)
            }
        }
    }

    @Test(.timeLimit(.minutes(1)))
    func connectingToAPinnedNameThatPresentsAnotherKeyThrowsPinnedKeyChanged() async throws {
        try await withSession(Self.configuration(" Bob ", identity: Self.mallory)) { impostor, address, reactor in
            let aliceConfiguration = Self.configuration(
                "alice", identity: Self.alice, trusting: [Self.bob.deviceID: "bob"])
            try await Session.run(configuration: aliceConfiguration, reactor: reactor) { alice in
                let events = EventReader(alice)
                let expected = SessionError.pinnedKeyChanged(
                    name: " Bob ", pinned: Self.bob.deviceID, presented: Self.mallory.deviceID)
                await #expect(throws: expected) {
                    try await alice.connect(toAddress: address)
                }
                let event = try await events.next(where: Self.isSessionErrorOrConnection)
                guard case .sessionError(let error) = event else {
                    Issue.record("no warning before \(event)")
                    return
                }
                #expect(error == expected)
                #expect(await alice.peers(withState: .connected).isEmpty)
                #expect(await impostor.peers(withState: .connected).isEmpty)
            }
        }
    }

    // MARK: AcceptPolicy.trusted

    /// A deny's detail longer than the wire takes (255 bytes) is cut at a character, not in the middle of one: cut
    /// mid-character, it is no valid UTF-8, and the whole detail was lost.
    @Test(.timeLimit(.minutes(1)))
    func aLongDenyDetailIsCutAtACharacter() async throws {
        let bobConfiguration = Self.configuration("bob", identity: Self.bob, policy: .ask)
        try await withSession(bobConfiguration) { bob, address, reactor in
            let events = EventReader(bob)
            try await Session.run(configuration: Self.configuration("alice", identity: Self.alice), reactor: reactor) {
                alice in
                async let connected = alice.connect(toAddress: address)
                let request = try await events.next { event in
                    if case .connectionRequested = event { true } else { false }
                }
                guard case .connectionRequested(let peer) = request else { return }
                // 200 two-byte characters: 400 bytes, and byte 255 is the middle of one.
                await bob.deny(peer.peerID, detail: String(repeating: "\u{E9}", count: 200))
                let outcome: Result<PeerInfo, any Error>
                do { outcome = .success(try await connected) } catch { outcome = .failure(error) }
                guard case .failure(let error) = outcome else {
                    Issue.record("a denied connect succeeded")
                    return
                }
                #expect(
                    error as? SessionError
                        == .denied(peer: "bob", reason: .deniedByUser, detail: String(repeating: "\u{E9}", count: 127)),
                    "\(error)")
            }
        }
    }

    @Test(.timeLimit(.minutes(1)))
    func trustedPolicyAcceptsPinnedPeersSilentlyAndDeniesOthers() async throws {
        let bobConfiguration = Self.configuration(
            "bob", identity: Self.bob, policy: .trusted, trusting: [Self.alice.deviceID: "alice"])
        try await withSession(bobConfiguration) { bob, address, reactor in
            let events = EventReader(bob)
            try await Session.run(configuration: Self.configuration("alice", identity: Self.alice), reactor: reactor) {
                alice in
                async let connected = alice.connect(toAddress: address)
                let first = try await events.next { event in
                    if case .connectionRequested = event { return true }
                    if case .peerStateChanged(_, .connected, _) = event { return true }
                    return false
                }
                if case .connectionRequested(let peer) = first {
                    Issue.record("a pinned peer was asked about")
                    await bob.deny(peer.peerID)
                }
                let bobInfo = try await connected
                guard case .peerStateChanged(let peer, _, _) = first else { return }
                #expect(peer.displayName == "alice" && peer.isTrusted)
                _ = try await Session.run(
                    configuration: Self.configuration("mallory", identity: Self.mallory), reactor: reactor
                ) { mallory in
                    await #expect(
                        throws: SessionError.denied(
                            peer: "bob", reason: .untrusted, detail: "only trusted peers are accepted")
                    ) {
                        try await mallory.connect(toAddress: address)
                    }
                }
                // Events are in order: a prompt for Mallory would come before Alice's later message.
                try await alice.send([42], to: [bobInfo.peerID])
                let next = try await events.next { event in
                    if case .connectionRequested = event { return true }
                    if case .dataReceived = event { return true }
                    return false
                }
                guard case .dataReceived(let bytes, _, _) = next else {
                    Issue.record("an unpinned peer became a prompt: \(next)")
                    return
                }
                #expect(Array(bytes) == [42])
                #expect(await bob.peers(withState: .connected).map(\.displayName) == ["alice"])
            }
        }
    }

    // MARK: Pairing codes

    @Test(.timeLimit(.minutes(1)))
    func bothEndsShowOnePairingCodeAndANewLinkHasANewOne() async throws {
        try await withSession(Self.configuration("bob", identity: Self.bob)) { bob, address, reactor in
            let events = EventReader(bob)
            try await Session.run(configuration: Self.configuration("alice", identity: Self.alice), reactor: reactor) {
                alice in
                var codes: [String] = []
                for _ in 0..<2 {
                    let bobInfo = try await alice.connect(toAddress: address)
                    let code = try #require(bobInfo.pairingCode)
                    #expect(code.count == 6 && code.allSatisfy { $0.isASCII && $0.isNumber })
                    #expect(await bob.peer(alice.localPeerID)?.pairingCode == code, "both ends show one code")
                    codes.append(code)
                    await alice.disconnect(bobInfo.peerID)
                    _ = try await events.next { event in
                        if case .peerStateChanged(_, .disconnected, _) = event { return true }
                        return false
                    }
                }
                // One chance in a million that two TLS sessions give the same code.
                #expect(codes[0] != codes[1], "each link (each TLS session) has its own code")
            }
        }
    }

    /// A probe of the address of a peer connected on another link (`--peer ADDRESS` is probed while the command
    /// connects to it) leaves that link's code alone. Its hello wiped the code; `ferry trust add --peer` then found
    /// none to ask about ("no pairing code to compare"), when the probe's hello came after the connection's pairing.
    @Test(.timeLimit(.minutes(1)))
    func aProbeOfAConnectedPeerKeepsItsPairingCode() async throws {
        try await withSession(Self.configuration("bob", identity: Self.bob)) { bob, address, reactor in
            try await Session.run(configuration: Self.configuration("alice", identity: Self.alice), reactor: reactor) {
                alice in
                let bobInfo = try await alice.connect(toAddress: address)
                let code = try #require(bobInfo.pairingCode)
                let probed = try await alice.probe(address)
                #expect(probed.peerID == bobInfo.peerID)
                #expect(await alice.peer(bobInfo.peerID)?.pairingCode == code, "the connected link's code stays")
                #expect(await alice.peer(bobInfo.peerID)?.state == .connected)
            }
        }
    }

    /// A second real link to a peer already connected (a second `connect` to its address: the peer denies it, or
    /// both sides dialled at once and one link is dropped) leaves the connected link's code alone on both sides:
    /// the code two people compare is the one of the link they use.
    @Test func aSecondLinkToAConnectedPeerKeepsTheConnectedLinksCode() async throws {
        try await withSession(Self.configuration("bob", identity: Self.bob)) { bob, address, reactor in
            try await Session.run(configuration: Self.configuration("alice", identity: Self.alice), reactor: reactor) {
                alice in
                let bobInfo = try await alice.connect(toAddress: address)
                let code = try #require(bobInfo.pairingCode)
                let aliceAtBob = try #require(
                    await bob.peers(withState: .connected).first { $0.deviceID == alice.configuration.deviceID })
                #expect(aliceAtBob.pairingCode == code, "both sides show one code")
                _ = try? await alice.connect(toAddress: address)
                #expect(await alice.peer(bobInfo.peerID)?.state == .connected)
                #expect(await alice.peer(bobInfo.peerID)?.pairingCode == code, "alice still shows the link's code")
                #expect(await bob.peer(aliceAtBob.peerID)?.pairingCode == code, "bob still shows the link's code")
            }
        }
    }
}

extension Session {
    /// Test hook: sends this session's datagrams for `peerID` to `address` instead of to the peer.
    func redirectDatagrams(of peerID: PeerID, to address: SocketAddress) {
        peers[peerID]?.datagramAddress = address
    }
}

@Suite("Display names compared as people read them")
struct DisplayNameMatchTests {
    @Test(arguments: [
        ("alice", "alice"), ("alice", " ALICE "), ("alice", "Alice\t"), ("alice", "ａｌｉｃｅ"),
        ("alice", "al\u{200B}ice"), ("alice", "\u{202E}alice"), ("alice", "ali\u{200D}ce\u{FEFF}"),
        ("Zoë", "Zoe\u{0308}"), ("ﬁle", "file"),
    ])
    func sameName(_ one: String, _ other: String) {
        #expect(DisplayNameMatch.same(one, other), "\(one.debugDescription) ~ \(other.debugDescription)")
    }

    @Test(arguments: [("alice", "alicia"), ("alice", "al ice"), ("alice", "bob"), ("alice", "")])
    func otherNames(_ one: String, _ other: String) {
        #expect(!DisplayNameMatch.same(one, other), "\(one.debugDescription) ~ \(other.debugDescription)")
    }

    @Test func cyrillicLookAlikesAreNotCaught() {
        // Documented in SECURITY.md: confusables of other scripts need Unicode's confusables data.
        #expect(!DisplayNameMatch.same("alice", "\u{0430}lice"))
    }
}
