import Foundation
import FerryTestSupport
import Testing

extension IntegrationTests {
    /// Many senders against one receiver at once (issue 9, part 4): past the receiver's caps (16 peers, 8 waiting
    /// connections from one address) a sender waits for room until its `--wait` runs out, instead of failing.
    @Suite(.serialized) struct ManySendersTests {
        @Test func twentySendersOfFiftyFilesStartedTogetherAllArrive() throws {
            let harness = try TransferHarness()
            let senders = 20
            let filesEach = 50
            var expected: [String: String] = [:]
            var directories: [String] = []
            for sender in 0..<senders {
                let name = String(format: "s%02d", sender)
                let directory = harness.source.path + "/" + name
                try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: false)
                for index in 0..<filesEach {
                    let bytes = TestFiles.randomBytes(
                        count: 200 + (sender * 131 + index * 37) % 3000, seed: UInt64(sender * 1000 + index + 1))
                    let path = directory + String(format: "/f%02d.bin", index)
                    try Data(bytes).write(to: URL(fileURLWithPath: path))
                    expected[name + String(format: "/f%02d.bin", index)] = try TransferHarness.sha256(path)
                }
                directories.append(directory)
            }
            let (receiver, port) = try harness.receiver(once: false)
            // Each sender is its own install (its own key), as 20 machines would be. All are started before any
            // is waited for; none waits for another.
            let processes = try directories.enumerated().map { index, directory in
                try harness.chat.registry.startFerry(
                    [
                        "send", "--json", directory, "--to", "127.0.0.1:\(port)", "--wait", "600", "--session",
                        harness.session, "--name", "sender\(index)", "--interface", "lo",
                    ], environment: harness.chat.environment("sender\(index)"))
            }
            for process in processes {
                #expect(try process.waitForExit(timeout: .seconds(900)) == 0, "\(process.capturedOutput())")
            }
            _ = try? receiver.terminate()
            // How many had to wait depends on the machine's speed; shown, not asserted.
            let waited = processes.filter { (try? $0.readAllStderr())?.contains("is busy") == true }.count
            print("\(waited) of \(senders) senders waited for room")
            let files = try TransferHarness.visibleFiles(in: harness.inbox.path)
            #expect(files.count == senders * filesEach, "\(files.count) files arrived")
            var mismatched: [String] = []
            for (path, digest) in expected.sorted(by: { $0.key < $1.key })
            where (try? TransferHarness.sha256(harness.inbox.path + "/" + path)) != digest {
                mismatched.append(path)
            }
            #expect(mismatched.isEmpty, "\(mismatched)")
        }

        @Test func aSenderWaitsWhileTooManyConnectionsFromItsAddressAreWaiting() throws {
            let harness = try TransferHarness()
            let file = try harness.files.text("note.txt", size: 5000)
            let (receiver, port) = try harness.receiver(once: true)
            // Eight connections from 127.0.0.1 that say nothing: the receiver's cap of waiting connections per
            // address is reached, and it closes the next one from here before its preface.
            var stalled = try (0..<8).map { _ in try LoopbackSocket.connect(port: UInt16(port)) }
            defer { stalled.forEach { $0.close() } }  // closed once: emptied below when closed early
            for socket in stalled {
                _ = try socket.read(exactly: 8)  // its preface: the receiver adopted it
            }
            let sender = try harness.sender([file.path], to: [port], ["--wait", "120"])
            let said = try sender.waitForErrorLine(timeout: .seconds(60)) { $0.contains("is busy") }
            #expect(said.contains("too many connections from this address are waiting"), "\(said)")
            stalled.forEach { $0.close() }
            stalled = []
            #expect(try sender.waitForExit(timeout: .seconds(120)) == 0, "\(sender.capturedOutput())")
            #expect(try receiver.waitForExit(timeout: .seconds(60)) == 0)
            #expect(try TransferHarness.sha256(harness.inbox.path + "/note.txt") == TransferHarness.sha256(file.path))
        }
    }
}
