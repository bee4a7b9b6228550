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

    /// `a` on a LocalSend device whose alias cannot be its name (another pinned peer has that name, or it is longer
    /// than a name may be) pins it without a name; the session trusts it under that same name, so the follower finds
    /// nothing changed and prints no "trusted peers changed: now trusting  (device ...)".
    @Test func alwaysOnALocalSendDeviceWhoseAliasCannotBeItsNameIsNoChangeToTheFollower() async throws {
        let home = try ConfigHome()
        let alice = TestIdentity.named("alice").deviceID
        try home.store.pin(alice, name: "iPhone")
        var configuration = SessionConfiguration(
            sessionID: "unit", displayName: "inbox", mode: .server, identity: TestIdentity.named("inbox"),
            trustedDevices: [alice: "iPhone"], listenPort: 0, discoveryEnabled: false, acceptPolicy: .ask,
            transfersEnabled: true)
        configuration.handshakeTimeout = TestIdentity.handshakeTimeout
        let context = CommandContext(
            stdout: CapturingTextSink(), stderr: CapturingTextSink(), environment: home.environment)
        let reporter = TransferReporter(context: context, json: false, bars: false)
        func localSend(_ id: DeviceID, _ alias: String) -> PeerInfo {
            PeerInfo(
                peerID: PeerID(rawValue: PeerID.firstForeign), deviceID: id, displayName: alias, mode: .peer,
                address: nil, isDiscovered: false, isAcceptingConnections: false, state: .connected,
                protocolName: "localsend")
        }
        try await withSession(configuration) { session, _, _ in
            for (id, alias) in [
                (TestIdentity.named("phone").deviceID, "iphone"),
                (TestIdentity.named("tablet").deviceID, String(repeating: "t", count: 65)),
            ] {
                try await ReceiveCommand.trustAlways(
                    localSend(id, alias), in: home.store, session: session, reporter: reporter)
                #expect(try home.store.entry(for: id)?.name == "")
                let change = TrustFollower.change(from: await session.trustedPeers, to: try home.store.load())
                #expect(change.isEmpty, "the follower would report \(change) after the prompt's own pin")
                #expect(await session.trustedPeers[id] == "")
            }
        }
    }
}
