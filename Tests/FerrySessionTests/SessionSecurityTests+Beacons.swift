import FerrySecurity
import FerrySystem
import FerryTestSupport
import FerryWire
import Testing

@testable import FerrySession

/// Beacons are unauthenticated: anyone on the LAN can send one, with any peer ID (they travel in beacons) and any
/// device ID (public too). A beacon must never change who an authenticated link's peer is.
extension SessionSecurityTests {
    static func beacon(
        _ peerID: PeerID, device: DeviceID, name: String, flags: BeaconFlags = [.available]
    ) -> [UInt8] {
        Beacon(
            flags: flags, mode: .peer, peerID: peerID, deviceID: device, tcpPort: 4000, sessionID: "unit",
            displayName: name
        ).encoded()
    }

    static let beaconSource = SocketAddress.ipv4(IPv4Address(127, 0, 0, 9), port: Discovery.port)

    /// Polls (with an upper bound) until `session` has authenticated a hello from `peerID` on some link.
    static func waitForHello(from peerID: PeerID, at session: Session, reactor: Reactor) async throws {
        let deadline = ContinuousClock.now + .seconds(30)
        while await !session.links.values.contains(where: { $0.peerID == peerID }) {
            guard ContinuousClock.now < deadline else {
                throw SessionError.connectTimedOut(peer: "hello", after: .zero)
            }
            try await reactor.sleep(until: .now + .milliseconds(5))
        }
    }

    @Test(.timeLimit(.minutes(1)))
    func aBeaconCannotRewriteTheDeviceOrNameOfAConnectedPeer() async throws {
        try await withSession(Self.configuration("bob", identity: Self.bob)) { bob, address, reactor in
            try await Session.run(configuration: Self.configuration("alice", identity: Self.alice), reactor: reactor) {
                alice in
                try await alice.connect(toAddress: address)
                let aliceID = alice.localPeerID
                let rejected = await bob.statistics.beaconsRejected
                await bob.beaconArrived(
                    Self.beacon(aliceID, device: Self.mallory.deviceID, name: "mallory"), from: Self.beaconSource)
                #expect(await bob.peer(aliceID)?.deviceID == Self.alice.deviceID)
                #expect(await bob.peer(aliceID)?.displayName == "alice")
                await bob.beaconArrived(
                    Self.beacon(aliceID, device: Self.alice.deviceID, name: "your bank"), from: Self.beaconSource)
                let record = await bob.peer(aliceID)
                #expect(record?.deviceID == Self.alice.deviceID)
                #expect(record?.displayName == "alice", "the name of an authenticated link is its hello's")
                #expect(record?.state == .connected)
                #expect(await bob.statistics.beaconsRejected == rejected + 1)
            }
        }
    }

    @Test(.timeLimit(.minutes(1)))
    func aBeaconCannotMakeAStrangersRequestLookTrusted() async throws {
        let bobConfiguration = Self.configuration(
            "bob", identity: Self.bob, policy: .trusted, trusting: [Self.alice.deviceID: "alice"])
        try await withSession(bobConfiguration) { bob, address, reactor in
            for leavingFirst in [false, true] {
                let stranger = try await StrangerLink.open(port: Int(address.port), identity: Self.mallory)
                defer { stranger.close() }
                let peerID = PeerID(rawValue: .random(in: 1...UInt64.max))
                if leavingFirst {
                    // Announced honestly first, so that discovery lists it and a leaving beacon has something to end.
                    await bob.beaconArrived(
                        Self.beacon(peerID, device: Self.mallory.deviceID, name: "mallory"), from: Self.beaconSource)
                }
                try await stranger.send(
                    stranger.hello(peerID: peerID.rawValue, name: "mallory"))
                try await Self.waitForHello(from: peerID, at: bob, reactor: reactor)
                if leavingFirst {
                    // "Leaving" must not drop the record of a peer with a live link: a new beacon would make it anew.
                    await bob.beaconArrived(
                        Self.beacon(peerID, device: Self.mallory.deviceID, name: "mallory", flags: [.leaving]),
                        from: Self.beaconSource)
                }
                // Between hello and request, the stranger's peer ID is announced with Alice's (pinned) device ID.
                await bob.beaconArrived(
                    Self.beacon(peerID, device: Self.alice.deviceID, name: "alice"), from: Self.beaconSource)
                try await stranger.send(SessionMessage.connectionRequest.encoded())
                let (messages, closedByPeer) = await stranger.messagesUntilClosed()
                #expect(closedByPeer)
                #expect(!messages.contains(.accept), "leaving first: \(leavingFirst)")
                #expect(
                    messages.contains(.deny(Deny(reason: .untrusted, detail: "only trusted peers are accepted"))))
                #expect(await bob.peers(withState: .connected).isEmpty)
            }
        }
    }
}
