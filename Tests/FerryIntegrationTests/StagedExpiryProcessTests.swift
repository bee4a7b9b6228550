import Foundation
import FerryTestSupport
import Testing

/// Issue 13: `ferry receive` removes staged data untouched for 7 days when it starts, and says so (`--json`:
/// a `stagedRemoved` line with reason `expired`) before it listens.
extension IntegrationTests {
    @Suite struct StagedExpiryProcessTests {
        @Test func aReceiverStartingRemovesStagedDataOlderThanSevenDays() throws {
            let harness = try TransferHarness()
            let staging = harness.inbox.path + "/.ferry-staging"
            try FileManager.default.createDirectory(
                atPath: staging, withIntermediateDirectories: false, attributes: [.posixPermissions: 0o700])
            let old = staging + "/" + String(repeating: "c", count: 64)
            let recent = staging + "/" + String(repeating: "d", count: 64)
            for path in [old, recent] {
                try Data(repeating: 1, count: 3000).write(to: URL(fileURLWithPath: path))
            }
            try FileManager.default.setAttributes(
                [.modificationDate: Date(timeIntervalSinceNow: -8 * 24 * 3600)], ofItemAtPath: old)
            let receiver = try harness.chat.registry.startFerry(
                [
                    "receive", "--json", "--into", harness.inbox.path, "--accept", "all", "--session", harness.session,
                    "--name", "inbox", "--port", "0", "--interface", "lo",
                ],
                environment: harness.chat.environment("inbox"))
            let removed = try receiver.nextJSON { $0["event"] as? String == "stagedRemoved" }
            #expect(removed["reason"] as? String == "expired")
            #expect(removed["files"] as? Int == 1 && removed["bytes"] as? Int == 3000)
            _ = try receiver.nextJSON { $0["event"] as? String == "listening" }
            #expect(!FileManager.default.fileExists(atPath: old))
            #expect(FileManager.default.fileExists(atPath: recent))
            _ = try receiver.terminate()
        }
    }
}
