import FerrySession
import FerryTestSupport
import FerryWire
import Foundation
import Testing

@testable import FerryCLI

/// A receiver left running follows its trusted-peers file from the moment it loaded it: nothing that lands between
/// the start-up load and the follower's first look is missed.
@Suite(.timeLimit(.minutes(2))) struct TrustFollowerTests {
    /// The first change `follower` reports for `session`, or nil when none came within a minute.
    static func firstReport(_ follower: TrustFollower, _ session: Session) async -> TrustFollower.Change? {
        let (reports, sink) = AsyncStream.makeStream(of: TrustFollower.Change?.self)
        let task = follower.follow(session: session) { result in sink.yield(try? result.get()) }
        defer { task.cancel() }
        return await withTaskGroup(of: TrustFollower.Change?.self) { group in
            group.addTask {
                for await report in reports { return report }
                return nil
            }
            group.addTask {
                try? await Task.sleep(for: .seconds(60))
                return nil
            }
            let first = await group.next() ?? nil
            group.cancelAll()
            sink.finish()
            return first
        }
    }

    @Test func aRemovalBetweenTheStartUpLoadAndTheFirstLookIsApplied() async throws {
        let home = try ConfigHome()
        let identity = TestIdentity.named("alice")
        let alice = identity.deviceID
        _ = try home.store.pin(alice, name: "alice")
        // The receiver's start-up load (SessionSetup) ...
        let loaded = try home.store.load()
        // ... then `ferry trust remove` in another terminal, before the follower has looked at the file.
        _ = try home.store.remove(alice)

        var configuration = SessionConfiguration(
            sessionID: "unit", displayName: "inbox", mode: .server, identity: TestIdentity.named("inbox"),
            trustedDevices: Dictionary(uniqueKeysWithValues: loaded.map { ($0.deviceID, $0.name) }),
            listenPort: 0, discoveryEnabled: false, acceptPolicy: .trusted, transfersEnabled: true)
        configuration.handshakeTimeout = TestIdentity.handshakeTimeout
        try await withSession(configuration) { session, _, _ in
            #expect(await session.trustedPeers == [alice: "alice"])
            let change = await Self.firstReport(TrustFollower(store: home.store), session)
            #expect(change?.removed == [alice: "alice"], "the removal was missed")
            #expect(await session.trustedPeers.isEmpty)
        }
    }
}
