import Foundation
import FerryTestSupport
import Glibc
import Testing

extension IntegrationTests {
    /// Ctrl-C (SIGINT, sent by PID) on each long-running command of real `ferry` processes on loopback: the
    /// process exits with status 130 (128 + SIGINT), its peers are told why it left (a transfer cancel, a goodbye),
    /// and a receiver keeps what it staged, so that sending again resumes. `peers` has its own test
    /// (SessionLoopbackTests.twoPeersDiscoverAndConnect).
    @Suite(.serialized) struct InterruptTests {
        /// A sender stopped mid-file: 130; the receiver hears "the sender cancelled", publishes nothing, keeps the
        /// verified data staged, and a second send resumes from it.
        @Test func aSendInterruptedMidTransferExits130AndTheNextSendResumes() throws {
            let harness = try TransferHarness()
            let file = try harness.files.random("big.bin", size: 32 << 20)
            let (receiver, port) = try harness.receiver(once: false)
            // A slow link, so that the send is still under way when the signal lands, whatever the machine's speed.
            let proxy = try FaultProxy(targetPort: UInt16(port), mode: .delay(.milliseconds(20)))
            defer { proxy.close() }
            let sender = try harness.sender([file.path], to: [Int(proxy.port)], ["--compress", "none"])
            _ = try receiver.nextJSON(timeout: .seconds(120)) { object in
                object["event"] as? String == "progress" && (object["bytes"] as? Int ?? 0) >= 2 << 20
            }
            sender.signal(SIGINT)
            #expect(try sender.waitForExit(timeout: .seconds(60)) == 130, "\(sender.capturedOutput())")
            let finished = try receiver.nextJSON(timeout: .seconds(60)) { $0["event"] as? String == "finished" }
            let failure = finished["failure"] as? String ?? ""
            #expect(failure.hasPrefix("the sender cancelled"), "\(finished)")
            #expect(try TransferHarness.visibleFiles(in: harness.inbox.path).isEmpty, "nothing partial is published")
            let again = try harness.send([file.path], to: [port], ["--compress", "none"])
            #expect(again.status == 0, "\(receiver.capturedOutput())")
            let resumed = again.finished?["resumedBytes"] as? Int ?? 0
            #expect(resumed >= 1 << 20, "the staged data was kept: \(again.finished ?? [:])")
            #expect(try TransferHarness.sha256(harness.inbox.path + "/big.bin") == TransferHarness.sha256(file.path))
            _ = try receiver.terminate()
        }

        /// A receiver stopped mid-file: 130; the sender hears that the receiver cancelled (not a lost link) and
        /// fails; a receiver started again on the same directory gets the rest only.
        @Test func aReceiveInterruptedMidTransferExits130AndTellsTheSender() throws {
            let harness = try TransferHarness()
            let file = try harness.files.random("big.bin", size: 32 << 20)
            let (receiver, port) = try harness.receiver(once: false)
            let proxy = try FaultProxy(targetPort: UInt16(port), mode: .delay(.milliseconds(20)))
            defer { proxy.close() }
            let sender = try harness.sender([file.path], to: [Int(proxy.port)], ["--compress", "none"])
            _ = try receiver.nextJSON(timeout: .seconds(120)) { object in
                object["event"] as? String == "progress" && (object["bytes"] as? Int ?? 0) >= 2 << 20
            }
            receiver.signal(SIGINT)
            #expect(try receiver.waitForExit(timeout: .seconds(60)) == 130, "\(receiver.capturedOutput())")
            #expect(try sender.waitForExit(timeout: .seconds(60)) == 1, "\(sender.capturedOutput())")
            let finished = sender.allStdoutLines.compactMap(TransferHarness.json).last {
                $0["event"] as? String == "finished"
            }
            let failure = finished?["failure"] as? String ?? ""
            #expect(failure.hasPrefix("the receiver cancelled (cancelled by the user"), "\(sender.capturedOutput())")
            #expect(try TransferHarness.visibleFiles(in: harness.inbox.path).isEmpty, "nothing partial is published")
            let (again, newPort) = try harness.receiver()
            let second = try harness.send([file.path], to: [newPort], ["--compress", "none"])
            #expect(second.status == 0, "\(again.capturedOutput())")
            let resumed = second.finished?["resumedBytes"] as? Int ?? 0
            #expect(resumed >= 1 << 20, "the staged data was kept: \(second.finished ?? [:])")
            #expect(try TransferHarness.sha256(harness.inbox.path + "/big.bin") == TransferHarness.sha256(file.path))
        }

        /// A receiver waiting for senders: 130, and nothing left in its directory.
        @Test func anIdleReceiveInterruptedExits130() throws {
            let harness = try TransferHarness()
            let (receiver, _) = try harness.receiver(once: false)
            receiver.signal(SIGINT)
            #expect(try receiver.waitForExit(timeout: .seconds(60)) == 130, "\(receiver.capturedOutput())")
            #expect(try TransferHarness.visibleFiles(in: harness.inbox.path).isEmpty)
        }

        /// `ferry watch` connected to its receiver: 130.
        @Test func aWatchInterruptedExits130() throws {
            let harness = try TransferHarness()
            let watched = try TemporaryDirectory(prefix: "ferry-watched")
            defer { watched.remove() }
            let (receiver, port) = try harness.receiver(once: false)
            let watcher = try harness.chat.registry.startFerry(
                [
                    "watch", watched.path, "--to", "127.0.0.1:\(port)", "--json", "--session", harness.session,
                    "--interface", "lo", "--name", "camera",
                ],
                environment: harness.chat.environment("camera"))
            _ = try watcher.nextJSON(timeout: .seconds(60)) { $0["event"] as? String == "watching" }
            watcher.signal(SIGINT)
            #expect(try watcher.waitForExit(timeout: .seconds(60)) == 130, "\(watcher.capturedOutput())")
            _ = try receiver.terminate()
        }

        /// `ferry chat` connected to a peer: 130, and the peer is told goodbye (not a lost link).
        @Test func aChatInterruptedExits130AndSaysGoodbye() throws {
            let harness = try ChatHarness()
            let (alice, _) = try harness.chat("alice")
            let (bob, _) = try harness.chat("bob")
            try alice.waitForEvent("connected", peer: "bob")
            bob.signal(SIGINT)
            #expect(try bob.waitForExit(timeout: .seconds(60)) == 130, "\(bob.capturedOutput())")
            let event = try alice.waitForEvent("disconnected", peer: "bob")
            #expect((event["reason"] as? String ?? "").contains("goodbye"), "\(event)")
        }
    }
}
