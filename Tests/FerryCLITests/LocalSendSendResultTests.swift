import FerrySecurity
import FerryTestSupport
import Foundation
import FerryWire
import Testing

@testable import FerryCLI
@testable import FerryLocalSend

/// What `ferry send` makes of a LocalSend receiver's answers (docs/LOCALSEND.md, "Sending"): a file it declined
/// (no token for it, or 204 to files) did not arrive, so it is a failure for that file and the send exits 1; a text
/// it showed (204 to a text) is done.
@Suite struct LocalSendSendResultTests {
    static func peer() -> SendCommand.LocalSendPeer {
        let fingerprint = LocalSendFingerprint(deviceID: DeviceID(bytes: [UInt8](repeating: 7, count: 32))!)
        return SendCommand.LocalSendPeer(
            name: "phone", destination: LocalSendDestination(host: "10.0.0.5", port: 53317, fingerprint: fingerprint),
            discovered: true)
    }

    @Test func filesTheReceiverDeclinedAreAFailureThatSaysDeclined() throws {
        let files = try TemporaryDirectory(prefix: "ferry-ls-result")
        defer { files.remove() }
        let one = try TestFiles(in: files).random("one.bin", size: 10, seed: 1)
        let two = try TestFiles(in: files).random("two.bin", size: 20, seed: 2)
        let items = [
            try LocalSendOutgoing.file(path: one.path, name: "one.bin"),
            try LocalSendOutgoing.file(path: two.path, name: "two.bin"), LocalSendOutgoing.text("hi"),
        ]
        let partly = LocalSendSendResult(
            outcomes: [.sent, .skipped, .shown], stop: nil, failure: nil, bytesSent: 10, cancelled: false)
        #expect(!partly.isSuccess)
        let result = SendCommand.localSendResult(Self.peer(), result: partly, items: items, pinGiven: false)
        #expect(result.filesSucceeded == 2)
        #expect(result.filesFailed == 1)
        #expect(result.failure?.contains("declined 1 of 3") == true, "\(String(describing: result.failure))")

        // 204 to files and a text: the text was shown, the files declined.
        let none = LocalSendSendResult(
            outcomes: [.skipped, .skipped, .shown], stop: nil, failure: nil, bytesSent: 0, cancelled: false)
        let declined = SendCommand.localSendResult(Self.peer(), result: none, items: items, pinGiven: false)
        #expect(declined.failure?.contains("declined 2 of 3") == true, "\(String(describing: declined.failure))")

        // A text alone, shown: done.
        let shown = LocalSendSendResult(outcomes: [.shown], stop: nil, failure: nil, bytesSent: 0, cancelled: false)
        #expect(shown.isSuccess)
        let text = SendCommand.localSendResult(
            Self.peer(), result: shown, items: [LocalSendOutgoing.text("hi")], pinGiven: false)
        #expect(text.failure == nil)
    }

    /// Hashing a file before the offer stops when the send is cancelled (Ctrl-C): checked every MiB, off the
    /// cooperative pool. A sparse 8 GiB file would take many seconds to hash; the task is cancelled at once.
    @Test func hashingABigFileStopsWhenTheSendIsCancelled() async throws {
        let files = try TemporaryDirectory(prefix: "ferry-ls-hash")
        defer { files.remove() }
        let path = files.url.appendingPathComponent("big.bin").path
        let descriptor = open(path, O_WRONLY | O_CREAT | O_CLOEXEC, 0o600)
        #expect(ftruncate(descriptor, 8 << 30) == 0)
        close(descriptor)
        let task = Task { try await LocalSendOutgoing.hashing(path: path, name: "big.bin") }
        task.cancel()
        await #expect(throws: LocalSendSendError.cancelled) { _ = try await task.value }
    }
}
