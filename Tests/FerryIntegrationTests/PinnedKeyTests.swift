import FerryTestSupport
import Foundation
import Testing

extension IntegrationTests {
    /// A pinned peer that presents another key (issue 4, "Pairing and trust"): someone else using a trusted name is
    /// refused with a loud warning, on the receiving side and on the sending side, and nothing is delivered; the
    /// real peer still gets through (the control).
    @Suite(.serialized) struct PinnedKeyTests {
        /// What `SessionError.pinnedKeyChanged` says, in a line of output (text or a JSON error event).
        static func isWarning(_ line: String) -> Bool {
            line.contains("may be impersonating") && line.contains("presents the key") && line.contains("you trusted")
        }

        @Test func aSenderUsingAPinnedNameWithAnotherKeyIsRefusedLoudly() async throws {
            let harness = try TransferHarness()
            let file = try harness.files.random("from-alice.bin", size: 150_000, seed: 6)
            let alice = try await harness.chat.deviceID(of: "alice")
            try await harness.chat.trust(alice, as: "alice", by: "inbox")
            let (receiver, port) = try harness.receiver(accept: "trusted")

            // Another install (its own config directory, so its own key) that calls itself alice.
            let arguments = [
                "send", "--json", file.path, "--to", "127.0.0.1:\(port)", "--session", harness.session,
                "--name", "alice", "--interface", "lo",
            ]
            let impostor = try harness.chat.registry.startFerry(
                arguments, environment: harness.chat.environment("mallory"))
            let (status, lines, errors) = try await impostor.finish()
            #expect(status == 1, "the impostor fails: \(lines) \(errors)")
            let warning = try await onOwnThread {
                try receiver.waitForLine(timeout: .seconds(60), where: Self.isWarning)
            }
            #expect(warning.contains("alice"), "\(warning)")
            #expect(try TransferHarness.visibleFiles(in: harness.inbox.path).isEmpty, "nothing from the impostor")

            // The real alice, to the same receiver (still waiting: nothing was offered).
            let real = try harness.chat.registry.startFerry(arguments, environment: harness.chat.environment("alice"))
            let outcome = try await real.finish()
            #expect(outcome.status == 0, "the real alice is accepted: \(outcome.stdout) \(outcome.stderr)")
            #expect(try await receiver.finish().status == 0)
            #expect(try TransferHarness.visibleFiles(in: harness.inbox.path) == ["from-alice.bin": 150_000])
        }

        @Test func aSenderThatPinnedItsReceiverRefusesAnotherKeyUnderItsName() async throws {
            let harness = try TransferHarness()
            let file = try harness.files.random("for-bob.bin", size: 150_000, seed: 7)
            let bob = try await harness.chat.deviceID(of: "bob")
            try await harness.chat.trust(bob, as: "bob", by: "outbox")
            let sendToBob = [
                "send", "--json", file.path, "--to", "bob", "--session", harness.session, "--name", "outbox",
                "--interface", "lo",
            ]

            // Another install that calls itself bob, found by discovery on lo.
            let impostor = try startReceiver(harness, name: "bob", install: "mallory")
            let refused = try harness.chat.registry.startFerry(
                sendToBob, environment: harness.chat.environment("outbox"))
            let (status, lines, errors) = try await refused.finish()
            #expect(status == 1, "\(lines) \(errors)")
            let output = lines + errors.split(separator: "\n").map(String.init)
            // Issue 28, 9: the name is pinned to bob's key, so `--to bob` waits for that device and never connects
            // to the other one; it says why nothing was sent (by address, the session's refusal above applies).
            #expect(
                output.contains { $0.contains("'bob' is pinned to device") && $0.contains("nothing is sent to it") },
                "the sender warns: \(output)")
            #expect(try TransferHarness.visibleFiles(in: harness.inbox.path).isEmpty, "nothing to the impostor")
            _ = try await onOwnThread { try impostor.terminate() }

            // The real bob: the same command succeeds.
            let real = try startReceiver(harness, name: "bob", install: "bob")
            let outcome = try await harness.chat.registry.startFerry(
                sendToBob, environment: harness.chat.environment("outbox")
            ).finish()
            #expect(outcome.status == 0, "the real bob is verified: \(outcome.stdout) \(outcome.stderr)")
            #expect(!outcome.stdout.contains(where: Self.isWarning))
            #expect(try await real.finish().status == 0)
            #expect(try TransferHarness.visibleFiles(in: harness.inbox.path) == ["for-bob.bin": 150_000])
        }

        /// `ferry receive --accept all --once` named `name`, with the key of the install `install`.
        func startReceiver(_ harness: TransferHarness, name: String, install: String) throws -> FerryProcess {
            let process = try harness.chat.registry.startFerry(
                [
                    "receive", "--json", "--into", harness.inbox.path, "--accept", "all", "--once", "--session",
                    harness.session, "--name", name, "--port", "0", "--interface", "lo",
                ], environment: harness.chat.environment(install))
            _ = try process.nextJSON(timeout: .seconds(60)) { $0["event"] as? String == "listening" }
            return process
        }
    }
}
