import FerryTestSupport
import Foundation
import Testing

/// Identities, trust and waiting for the security tests: every wait runs on a thread of its own, so a test that
/// waits for a `ferry` process never holds a cooperative thread that an in-process proxy needs.
extension ChatHarness {
    /// The device ID (64 hex digits) of the install `name` (`ferry id --json` with its config directory),
    /// created on first use.
    func deviceID(of name: String) async throws -> String {
        let process = try registry.startFerry(["id", "--json"], environment: environment(name))
        let (status, lines, _) = try await process.finish(timeout: .seconds(60))
        let object = lines.compactMap(TransferHarness.json).first
        let hex = try #require(object?["hex"] as? String, "ferry id --json: \(lines)")
        #expect(status == 0)
        return hex
    }

    /// `ferry trust add ID --name PEER` in the config directory of the install `name`.
    func trust(_ deviceID: String, as peer: String, by name: String) async throws {
        let process = try registry.startFerry(
            ["trust", "add", deviceID, "--name", peer], environment: environment(name))
        let (status, _, errors) = try await process.finish(timeout: .seconds(60))
        #expect(status == 0, "ferry trust add: \(errors)")
    }
}

extension FerryProcess {
    /// Waits until the process exited and its output ended; its status, stdout lines and stderr.
    func finish(timeout: Duration = .seconds(240)) async throws -> (status: Int32, stdout: [String], stderr: String) {
        try await onOwnThread { [self] in
            let status = try waitForExit(timeout: timeout)
            _ = try readAllStdout(timeout: .seconds(30))
            return (status, allStdoutLines, try readAllStderr(timeout: .seconds(30)))
        }
    }

    /// The next stdout JSON line whose `event` is `event`, as text (parse it with `TransferHarness.json`).
    func nextEvent(_ event: String, timeout: Duration = .seconds(120)) async throws -> String {
        try await onOwnThread { [self] in
            try waitForLine(timeout: timeout) { TransferHarness.json($0)?["event"] as? String == event }
        }
    }
}
