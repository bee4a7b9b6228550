import FerryTestSupport
import Foundation
import Testing

/// Issue 28, 10 (its visible half): a stranger appeared in `ferry chat` as `* carol joined`, with neither a code to
/// compare nor whether it is pinned. The join line now says which: a stranger with its short device ID and the
/// link's pairing code (the one the other side shows), a pinned peer as trusted, key verified (with the code too).
extension IntegrationTests {
    @Suite(.serialized) struct ChatJoinTests {
        /// The code `ferry chat --json` reports for `peer` in its `connected` event, as people read it ("123 456").
        static func code(_ chat: FerryProcess, of peer: String) throws -> String {
            let connected = try chat.waitForEvent("connected", peer: peer)
            let code = try #require(connected["code"] as? String, "\(connected)")
            return String(code.prefix(3)) + " " + String(code.dropFirst(3))
        }

        @Test func aStrangerJoinsWithItsDeviceAndTheCodeBothSidesShow() async throws {
            let harness = try ChatHarness()
            let bob = try ChatTerminalTests.pane(harness, "bob")
            defer { bob.close() }
            let (alice, _) = try harness.chat("alice")
            let code = try Self.code(alice, of: "bob")
            let screen = try bob.waitFor("* alice joined")
            #expect(screen.contains("* alice joined: not trusted, device "), "\(screen)")
            #expect(screen.contains("pairing code \(code) (alice shows the same code"), "\(screen)")
        }

        @Test func aPinnedPeerJoinsAsTrustedWithTheCodeAllTheSame() async throws {
            let harness = try ChatHarness()
            try await harness.trust(try await harness.deviceID(of: "alice"), as: "alice", by: "bob")
            let bob = try ChatTerminalTests.pane(harness, "bob")
            defer { bob.close() }
            let (alice, _) = try harness.chat("alice")
            let code = try Self.code(alice, of: "bob")
            let screen = try bob.waitFor("* alice joined")
            #expect(screen.contains("* alice joined: trusted, key verified (pairing code \(code))"), "\(screen)")
        }
    }
}
