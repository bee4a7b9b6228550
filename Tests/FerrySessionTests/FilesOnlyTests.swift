import FerryTestSupport
import FerryWire
import Testing

@testable import FerrySession

/// A session that reads no messages (`takesMessages = false`, the CLI's file commands) says so in its beacon and its
/// hello, and the other side's `PeerInfo.takesMessages` is false for it (PROTOCOL.md 4.1, 6): what lets a chat leave
/// a `ferry receive` or a passing `ferry send` out.
@Suite(.serialized, .timeLimit(.minutes(5))) struct FilesOnlyTests {
    @Test func aFilesOnlySessionSaysSoInItsBeaconAndItsHello() async throws {
        var files = SessionTests.configuration("files")
        files.takesMessages = false
        try await SessionTests.withPair(bob: SessionTests.configuration("bob"), alice: files) { bob, alice in
            #expect(await alice.beacon(query: false, leaving: false).flags.contains(.filesOnly))
            #expect(await !bob.beacon(query: false, leaving: false).flags.contains(.filesOnly))
            let bobEvents = EventReader(bob)
            let connected = try await alice.connect(
                toAddress: await SessionTests.address(of: bob), timeout: .seconds(30))
            #expect(connected.takesMessages, "bob reads messages")
            let event = try await bobEvents.next {
                if case .peerStateChanged(_, .connected, _) = $0 { true } else { false }
            }
            guard case .peerStateChanged(let peer, _, _) = event else { return }
            #expect(peer.displayName == "files")
            #expect(!peer.takesMessages, "bob must see that the peer reads no messages")
            #expect(await bob.peer(peer.peerID)?.takesMessages == false)
        }
    }
}
