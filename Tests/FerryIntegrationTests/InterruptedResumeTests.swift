import Foundation
import FerryTestSupport
import Glibc
import Testing

/// Issue 28, 3: "Interruptions mislead". A receiver stopped mid-file (SIGTERM, as a service manager stops it) keeps
/// what it verified for a resume; the sender said `nothing sent to r3: the receiver cancelled (shutting down)`, the
/// re-send did not mention resuming, and the numbers disagreed. Real `ferry` processes on loopback, the receiver's
/// link slowed by a delaying proxy so that the signal lands mid-file whatever the machine's speed.
extension IntegrationTests {
    @Suite(.serialized) struct InterruptedResumeTests {
        static let size = 32 << 20

        /// `N.0 MiB` for a whole number of MiB below 100, as ferry prints it (TransferFormat.bytes).
        static func mebibytes(_ bytes: Int) -> String {
            "\(bytes >> 20).0 MiB"
        }

        /// A send to `port` through a delaying proxy; returns once the receiver (JSON) stored at least 2 MiB.
        static func slowSend(
            _ harness: TransferHarness, _ file: String, receiver: FerryProcess, port: Int,
            start: (Int) throws -> Void
        ) throws -> FaultProxy {
            let proxy = try FaultProxy(targetPort: UInt16(port), mode: .delay(.milliseconds(20)))
            try start(Int(proxy.port))
            _ = try receiver.nextJSON(timeout: .seconds(120)) { object in
                object["event"] as? String == "progress" && (object["bytes"] as? Int ?? 0) >= 2 << 20
            }
            return proxy
        }

        static func objects(_ process: FerryProcess, _ event: String) -> [[String: Any]] {
            process.allStdoutLines.compactMap(TransferHarness.json).filter { $0["event"] as? String == event }
        }

        /// A person at the sender's terminal reads what happened and what the receiver keeps (not "nothing sent");
        /// the re-send says that it resumes, and where, in its plain lines and its summary.
        @Test func theSenderSaysTheReceiverShutDownAndKeepsWhatItGotAndTheResendSaysItResumes() throws {
            let harness = try TransferHarness()
            let file = try harness.files.random("big.bin", size: Self.size)
            let (receiver, port) = try harness.receiver(once: false)
            var pane: TerminalPane?
            let proxy = try Self.slowSend(harness, file.path, receiver: receiver, port: port) { proxyPort in
                let sender = try IntegrationTests.PairingTests.terminalSender(
                    harness, [file.path], port: proxyPort, ["--compress", "none"])
                pane = sender
                try sender.waitFor("Does inbox show")
                try sender.type("y")
            }
            defer { proxy.close() }
            let sender = try #require(pane)
            defer { sender.close() }
            receiver.signal(SIGTERM)
            #expect(try receiver.waitForExit(timeout: .seconds(60)) == 143, "\(receiver.capturedOutput())")
            let (status, screen) = try sender.waitForExit()
            #expect(status == 1, "\(screen)")
            #expect(!screen.contains("nothing sent"), "\(screen)")
            let stopped = screen.split(separator: "\n").last { $0.hasPrefix("stopped at inbox: ") }.map(String.init)
            let line = try #require(stopped, "\(screen)")
            #expect(line.hasPrefix("stopped at inbox: the receiver shut down at "), "\(line)")
            #expect(line.hasSuffix(" of 32.0 MiB; it keeps them, send again to resume"), "\(line)")
            let kept = try #require(Self.objects(receiver, "finished").last?["keptBytes"] as? Int)
            #expect(kept > 0 && kept < Self.size, "\(receiver.capturedOutput())")
            // The sender says what it knows from the receiver's acknowledgements: at most what the receiver kept.
            let said = line.components(separatedBy: " at ").last?.components(separatedBy: " MiB of").first ?? ""
            let saidBytes = Int((Double(said) ?? -1) * Double(1 << 20))
            #expect(saidBytes > 0 && saidBytes <= kept, "\(line) against \(kept) kept")

            // The re-send, plain lines on a pipe: it says where it resumes, and the summary what was not sent again.
            let (again, newPort) = try harness.receiver()
            let resend = try harness.chat.registry.startFerry(
                [
                    "send", file.path, "--to", "127.0.0.1:\(newPort)", "--compress", "none", "--session",
                    harness.session, "--name", "outbox", "--interface", "lo",
                ], environment: harness.chat.environment("outbox"))
            #expect(try resend.waitForExit(timeout: .seconds(240)) == 0, "\(resend.capturedOutput())")
            let offset = try #require(
                (Self.objects(again, "started").first?["files"] as? [[String: Any]])?.first?["resumeOffset"] as? Int)
            #expect(offset == kept, "resumed from exactly what the receiver said it kept")
            let lines = resend.allStderrLines
            let resumed = Self.mebibytes(offset)
            #expect(lines.contains("resuming big.bin at \(resumed) of 32.0 MiB: inbox kept them from an earlier send"))
            #expect(lines.contains("sent big.bin to inbox (32.0 MiB; \(resumed) of it resumed, not sent again)"))
            #expect(
                lines.last { $0.hasPrefix("sent 1 file (32.0 MiB) to 1 peer in ") }?
                    .hasSuffix(", \(resumed) resumed, not sent again)") == true, "\(lines)")
            #expect(try TransferHarness.sha256(harness.inbox.path + "/big.bin") == TransferHarness.sha256(file.path))
        }

        /// With --json: SIGTERM is a `stopping` event on the receiver's stdout (not a plain line there or on stderr),
        /// `finished` says on both sides what the receiver keeps, and the re-send's per-file `resumedBytes` is the
        /// bytes not sent again, the same in `started`, `file`, `finished` and `summary`, on both sides.
        @Test func underJSONTheStopIsAnEventAndEveryResumedCountAgrees() throws {
            let harness = try TransferHarness()
            let file = try harness.files.random("big.bin", size: Self.size)
            let (receiver, port) = try harness.receiver(once: false)
            var started: FerryProcess?
            let proxy = try Self.slowSend(harness, file.path, receiver: receiver, port: port) { proxyPort in
                started = try harness.sender([file.path], to: [proxyPort], ["--compress", "none"])
            }
            defer { proxy.close() }
            let sender = try #require(started)
            receiver.signal(SIGTERM)
            #expect(try receiver.waitForExit(timeout: .seconds(60)) == 143, "\(receiver.capturedOutput())")
            #expect(try sender.waitForExit(timeout: .seconds(60)) == 1, "\(sender.capturedOutput())")
            #expect(receiver.allStdoutLines.allSatisfy { TransferHarness.json($0) != nil }, "only JSON on stdout")
            #expect(!receiver.allStderrLines.contains { $0.contains("stopping") }, "\(receiver.capturedOutput())")
            let stopping = Self.objects(receiver, "stopping")
            #expect(stopping.count == 1 && stopping.first?["signal"] as? String == "SIGTERM", "\(stopping)")
            let kept = Self.objects(receiver, "finished").last?["keptBytes"] as? Int ?? 0
            #expect(kept > 0, "\(receiver.capturedOutput())")
            let acknowledged = Self.objects(sender, "finished").last?["keptBytes"] as? Int ?? 0
            #expect(acknowledged > 0 && acknowledged <= kept, "\(sender.capturedOutput())")
            let peer = (Self.objects(sender, "summary").last?["peers"] as? [[String: Any]])?.first
            #expect(peer?["keptBytes"] as? Int == acknowledged, "\(peer ?? [:])")

            let (again, newPort) = try harness.receiver()
            let resend = try harness.sender([file.path], to: [newPort], ["--compress", "none"])
            #expect(try resend.waitForExit(timeout: .seconds(240)) == 0, "\(resend.capturedOutput())")
            #expect(try again.waitForExit(timeout: .seconds(60)) == 0, "\(again.capturedOutput())")
            for side in [resend, again] {
                let offset =
                    (Self.objects(side, "started").first?["files"] as? [[String: Any]])?.first?["resumeOffset"] as? Int
                let perFile = Self.objects(side, "file").map { $0["resumedBytes"] as? Int ?? -1 }
                let finished = Self.objects(side, "finished").last?["resumedBytes"] as? Int
                #expect(offset == kept, "resumed from exactly what was kept: \(side.capturedOutput())")
                #expect(perFile == [offset ?? -2], "\(side.capturedOutput())")
                #expect(finished == offset, "\(side.capturedOutput())")
            }
            let resumed = (Self.objects(resend, "summary").last?["peers"] as? [[String: Any]])?.first?["resumedBytes"]
            #expect(resumed as? Int == Self.objects(resend, "finished").last?["resumedBytes"] as? Int)
        }

        /// The receiver's own log (a service's, no terminal): the SIGTERM, then what it keeps staged for a resume.
        @Test func aReceiverStoppedBySIGTERMSaysWhatItKeepsStaged() throws {
            let harness = try TransferHarness()
            let file = try harness.files.random("big.bin", size: Self.size)
            let receiver = try harness.chat.registry.startFerry(
                [
                    "receive", "--into", harness.inbox.path, "--accept", "all", "--session", harness.session, "--name",
                    "inbox", "--port", "0", "--interface", "lo",
                ], environment: harness.chat.environment("inbox"))
            receiver.closeStdin()
            let listening = try receiver.waitForErrorLine { $0.hasPrefix("receiving into") }
            let port = try #require(Int(listening.components(separatedBy: "(port ").last?.prefix { $0.isNumber } ?? ""))
            let proxy = try FaultProxy(targetPort: UInt16(port), mode: .delay(.milliseconds(20)))
            defer { proxy.close() }
            let sender = try harness.sender([file.path], to: [Int(proxy.port)], ["--compress", "none"])
            _ = try sender.nextJSON(timeout: .seconds(120)) { object in
                object["event"] as? String == "progress" && (object["bytes"] as? Int ?? 0) >= 2 << 20
            }
            receiver.signal(SIGTERM)
            #expect(try receiver.waitForExit(timeout: .seconds(60)) == 143, "\(receiver.capturedOutput())")
            #expect(try sender.waitForExit(timeout: .seconds(60)) == 1)
            let log = receiver.allStderrLines
            let stopping = try #require(log.firstIndex(of: "stopping: SIGTERM"), "\(log)")
            let line = try #require(log.last { $0.hasPrefix("transfer from outbox ") }, "\(log)")
            #expect(log.firstIndex(of: line) ?? 0 > stopping, "said after the SIGTERM: \(log)")
            #expect(line.hasPrefix("transfer from outbox stopped (shutting down) at "), "\(line)")
            #expect(line.hasSuffix(" of 32.0 MiB; kept staged for a resume when outbox sends again"), "\(line)")
        }

        /// Ctrl-C at the sender: no summary comes after it, so its line for the transfer is the last word, and says
        /// what a ferry receiver does with what it got (the receiver's own event says what it keeps).
        @Test func aSenderStoppedByCtrlCSaysWhereItStoppedAndThatTheReceiverKeepsIt() throws {
            let harness = try TransferHarness()
            let file = try harness.files.random("big.bin", size: Self.size)
            let (receiver, port) = try harness.receiver(once: false)
            var started: FerryProcess?
            let proxy = try Self.slowSend(harness, file.path, receiver: receiver, port: port) { proxyPort in
                started = try harness.chat.registry.startFerry(
                    [
                        "send", file.path, "--to", "127.0.0.1:\(proxyPort)", "--compress", "none", "--session",
                        harness.session, "--name", "outbox", "--interface", "lo",
                    ], environment: harness.chat.environment("outbox"))
            }
            defer { proxy.close() }
            let sender = try #require(started)
            sender.signal(SIGINT)
            #expect(try sender.waitForExit(timeout: .seconds(60)) == 130, "\(sender.capturedOutput())")
            let line = try #require(sender.allStderrLines.last, "\(sender.capturedOutput())")
            #expect(line.hasPrefix("transfer to inbox stopped: cancelled by the user at "), "\(line)")
            #expect(line.hasSuffix(" of 32.0 MiB; a ferry receiver keeps what it verified, send again to resume"))
            let finished = try receiver.nextJSON(timeout: .seconds(60)) { $0["event"] as? String == "finished" }
            #expect(finished["keptBytes"] as? Int ?? 0 > 0, "\(finished)")
            _ = try receiver.terminate()
        }

        /// A broadcast (several --to, as --all sends to the peers it found): each peer's line says how it ended, and
        /// the one that shut down says what it keeps.
        @Test func aBroadcastSaysPerReceiverWhatTheOneThatShutDownKeeps() throws {
            let harness = try TransferHarness()
            let file = try harness.files.random("big.bin", size: Self.size)
            let other = try TemporaryDirectory(prefix: "ferry-inbox-1")
            defer { other.remove() }
            let (first, firstPort) = try harness.receiver("inbox-0", once: true)
            let (second, secondPort) = try harness.receiver("inbox-1", into: other.path, once: false)
            let proxies = try [firstPort, secondPort].map {
                try FaultProxy(targetPort: UInt16($0), mode: .delay(.milliseconds(20)))
            }
            defer { proxies.forEach { $0.close() } }
            let sender = try harness.chat.registry.startFerry(
                [
                    "send", file.path, "--to", "127.0.0.1:\(proxies[0].port)", "--to", "127.0.0.1:\(proxies[1].port)",
                    "--compress", "none", "--session", harness.session, "--name", "outbox", "--interface", "lo",
                ], environment: harness.chat.environment("outbox"))
            _ = try second.nextJSON(timeout: .seconds(120)) { object in
                object["event"] as? String == "progress" && (object["bytes"] as? Int ?? 0) >= 2 << 20
                    && (object["bytes"] as? Int ?? 0) < Self.size
            }
            second.signal(SIGTERM)
            #expect(try second.waitForExit(timeout: .seconds(60)) == 143, "\(second.capturedOutput())")
            #expect(try sender.waitForExit(timeout: .seconds(240)) == 1, "\(sender.capturedOutput())")
            #expect(try first.waitForExit(timeout: .seconds(60)) == 0, "\(first.capturedOutput())")
            let lines = sender.allStderrLines
            #expect(lines.contains("  inbox-0: ok"), "\(lines)")
            let line = try #require(lines.first { $0.hasPrefix("  inbox-1: ") }, "\(lines)")
            #expect(line.hasPrefix("  inbox-1: stopped: the receiver shut down at "), "\(line)")
            #expect(line.hasSuffix(" of 32.0 MiB; it keeps them, send again to resume"), "\(line)")
        }
    }
}
