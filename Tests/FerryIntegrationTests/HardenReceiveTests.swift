import Foundation
import FerryTestSupport
import Glibc
import Testing

extension IntegrationTests {
    /// Promises of the receiving side, with real `ferry` processes on loopback: no clobber and no partial file under
    /// concurrent senders (promise 2), and hostile names that never reach a terminal raw (promise 7).
    @Suite(.serialized) struct HardenReceiveTests {
        @Test func twoSendersOfOneNameAtOnceBothArriveIntactAndNeverPartly() throws {
            let harness = try TransferHarness()
            let otherSource = try TemporaryDirectory(prefix: "ferry-source-2")
            defer { otherSource.remove() }
            // Same name, different contents and sizes; several chunks each, so that the two transfers overlap.
            let first = try harness.files.random("same.bin", size: 6 << 20, seed: 1)
            let second = try TestFiles(in: otherSource).random("same.bin", size: (5 << 20) + 777, seed: 2)
            let expected = [try TransferHarness.sha256(first.path), try TransferHarness.sha256(second.path)].sorted()

            let (receiver, port) = try harness.receiver(once: false)
            let recorder = try InotifyRecorder(directory: harness.inbox.path)
            // The first transfer is slowed from its start, then held while the second one is accepted: both are
            // under way at once whatever the machine's speed.
            let proxy = try FaultProxy(targetPort: UInt16(port), mode: .delay(.milliseconds(20)))
            defer { proxy.close() }
            let options = ["--compress", "none"]
            let slow = try harness.sender([first.path], to: [Int(proxy.port)], options)
            _ = try receiver.nextJSON(timeout: .seconds(120), where: { $0["event"] as? String == "started" })
            proxy.mode = .stall
            let fast = try harness.sender([second.path], to: [port], options)
            _ = try receiver.nextJSON(timeout: .seconds(120), where: { $0["event"] as? String == "started" })
            proxy.mode = .pass
            let before = receiver.allStdoutLines.compactMap(TransferHarness.json).compactMap { $0["event"] as? String }
            #expect(!before.contains("file") && !before.contains("finished"), "both under way at once: \(before)")
            for sender in [slow, fast] {
                #expect(try sender.waitForExit(timeout: .seconds(240)) == 0, "\(sender.capturedOutput())")
            }
            let events = recorder.stop().filter { !$0.name.hasPrefix(".") }
            _ = try? receiver.terminate()

            let files = try TransferHarness.visibleFiles(in: harness.inbox.path)
            #expect(Set(files.keys) == ["same.bin", "same (1).bin"], "\(files)")
            let received = try files.keys.map { try TransferHarness.sha256(harness.inbox.path + "/" + $0) }.sorted()
            #expect(received == expected, "each arrived whole, neither overwrote the other")
            let sizes = [6 << 20, (5 << 20) + 777]
            let arrivals = events.filter { $0.mask & UInt32(IN_MOVED_TO) != 0 }
            #expect(events.count == arrivals.count, "only renames into place, never a write in DIR: \(events)")
            #expect(arrivals.count == 2)
            for arrival in arrivals {
                #expect(arrival.sizeWhenSeen.map(sizes.contains) == true, "seen complete: \(arrival)")
                #expect(arrival.sizeWhenSeen == files[arrival.name], "\(arrival)")
            }
        }

        @Test func aHostileFileNameNeverReachesATerminalRaw() throws {
            let harness = try TransferHarness()
            // Sets the window title, erases the line, returns the carriage and forges a line, reverses the text.
            let name = "evil\u{1B}]0;owned\u{07}\u{1B}[2K\rFORGED\u{202E}gpj.exe"
            let file = try harness.files.text(name, size: 100)
            let receiver = try harness.chat.registry.startFerry(
                [
                    "receive", "--into", harness.inbox.path, "--accept", "all", "--once", "--session", harness.session,
                    "--name", "inbox", "--port", "0", "--interface", "lo",
                ], environment: harness.chat.environment("inbox"))
            let listening = try receiver.waitForErrorLine { $0.hasPrefix("receiving into") }
            let digits = listening.components(separatedBy: "(port ").last?.prefix { $0.isNumber } ?? ""
            let port = try #require(Int(digits), "\(listening)")
            let sender = try harness.chat.registry.startFerry(
                [
                    "send", file.path, "--to", "127.0.0.1:\(port)", "--session", harness.session, "--name", "outbox",
                    "--interface", "lo",
                ], environment: harness.chat.environment("outbox"))
            #expect(try sender.waitForExit(timeout: .seconds(120)) == 1, "the receiver denies the name")
            _ = try? receiver.terminate()
            let sent = try sender.readAllStderr()
            for (who, text) in [("sender", sent), ("receiver", try receiver.readAllStderr())] {
                let raw = text.unicodeScalars.filter { (scalar: Unicode.Scalar) -> Bool in
                    let value = scalar.value
                    return value != 0x0A && (value < 0x20 || (0x7F...0x9F).contains(value) || value == 0x202E)
                }
                #expect(raw.isEmpty, "\(who): \(text.debugDescription)")
                #expect(!text.split(separator: "\n").contains { $0.hasPrefix("FORGED") }, "\(who): \(text)")
            }
            #expect(sent.contains("denied"), "\(sent)")
            #expect(try TransferHarness.visibleFiles(in: harness.inbox.path).isEmpty)
        }
    }
}
