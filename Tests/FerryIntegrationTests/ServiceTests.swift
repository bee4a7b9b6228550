import Foundation
import FerryTestSupport
import Glibc
import Testing

extension IntegrationTests {
    /// `ferry receive` as a service that stays up (issue 9, part 4), with real processes on loopback: the systemd
    /// unit, SIGTERM, a receive directory that disappears, a log without a terminal, `ferry watch` losing its
    /// directory.
    @Suite(.serialized) struct ServiceTests {
        /// The repository's root, found from this file.
        static let root = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
            .deletingLastPathComponent()

        @Test func theSystemdUnitVerifiesAndRunsTheDocumentedBinary() throws {
            let unit = Self.root.appendingPathComponent("contrib/systemd/ferry-receive.service")
            let text = try String(contentsOf: unit, encoding: .utf8)
            let lines = Set(text.split(separator: "\n").map(String.init))
            #expect(lines.contains("ExecStart=%h/.local/bin/ferry receive --accept trusted"))
            #expect(lines.contains("Restart=on-failure"))
            #expect(lines.contains("SuccessExitStatus=143"), "SIGTERM's clean exit is not a failure")
            #expect(lines.contains("StandardInput=null"))
            let reason = "systemd-analyze is missing (install the Debian package systemd)"
            guard let analyze = ExecutableSearch.path(of: "systemd-analyze") else {
                _ = try Requirement.check("systemd-analyze", available: false, reason: reason)  // throws in CI
                try Test.cancel("\(reason)")
            }
            // A home with the binary where the README installs it (%h/.local/bin/ferry), and a runtime directory
            // for the user manager that `--user verify` starts (none exists for root in a container).
            let home = try TemporaryDirectory(prefix: "ferry-unit-home")
            defer { home.remove() }
            try FileManager.default.createDirectory(
                atPath: home.path + "/.local/bin", withIntermediateDirectories: true)
            try FileManager.default.createSymbolicLink(
                atPath: home.path + "/.local/bin/ferry", withDestinationPath: try FerryBinary.url.path)
            try FileManager.default.createDirectory(atPath: home.path + "/run", withIntermediateDirectories: true)
            chmod(home.path + "/run", 0o700)
            let copy = home.path + "/ferry-receive.service"
            try FileManager.default.copyItem(atPath: unit.path, toPath: copy)
            let registry = ProcessRegistry()
            defer { registry.stopAll() }
            let verify = try registry.start(
                executable: analyze, arguments: ["--user", "verify", copy],
                environment: ["HOME": home.path, "XDG_RUNTIME_DIR": home.path + "/run"])
            let status = try verify.waitForExit(timeout: .seconds(120))
            let output = try verify.readAllStdout() + verify.readAllStderr()
            #expect(status == 0, "\(output)")
            // verify exits 0 on unknown keys and bad values: every line about the unit is a mistake in it.
            let complaints = output.split(separator: "\n").filter { $0.contains("ferry-receive.service") }
            #expect(complaints.isEmpty, "\(output)")
        }

        @Test func sigtermEndsReceiveCleanlyKeepsStagedDataAndALaterSendResumes() async throws {
            // Two hosts, the sender's link slowed to 16 Mbit/s (a real link, no proxy in between, whose own closes
            // could eat the receiver's last frames): 24 MiB take 12 s, so the transfer is under way when the
            // signal comes.
            try await ChatHarness.onTestBed(hosts: 2) { bed, harness in
                let source = try TemporaryDirectory(prefix: "ferry-sigterm-source")
                let inbox = try TemporaryDirectory(prefix: "ferry-sigterm-inbox")
                defer {
                    source.remove()
                    inbox.remove()
                }
                let file = try TestFiles(in: source).random("big.bin", size: 24 << 20, seed: 9)
                func receiver(once: Bool) throws -> (FerryProcess, Int) {
                    let process = harness.registry.register(
                        try bed.startFerry(
                            on: bed.hosts[1],
                            [
                                "receive", "--json", "--into", inbox.path, "--accept", "all", "--session",
                                harness.session, "--name", "inbox", "--port", "0",
                            ] + (once ? ["--once"] : []),
                            environment: harness.environment("inbox")))
                    let listening = try process.nextJSON { $0["event"] as? String == "listening" }
                    return (process, listening["port"] as? Int ?? 0)
                }
                func sender(to port: Int) throws -> FerryProcess {
                    harness.registry.register(
                        try bed.startFerry(
                            on: bed.hosts[0],
                            [
                                "send", "--json", file.path, "--to", "\(bed.hosts[1].address):\(port)", "--compress",
                                "none", "--session", harness.session, "--name", "outbox",
                            ],
                            environment: harness.environment("outbox")))
                }
                try bed.limitRate(host: bed.hosts[0], mbit: 16, burstKiB: 32)
                let (first, port) = try receiver(once: false)
                let interrupted = try sender(to: port)
                _ = try first.nextJSON(timeout: .seconds(120)) { object in
                    object["event"] as? String == "progress" && (object["bytes"] as? Int ?? 0) >= 2 << 20
                }
                first.signal(SIGTERM)
                #expect(try first.waitForExit(timeout: .seconds(60)) == 143, "\(first.capturedOutput())")
                #expect(try interrupted.waitForExit(timeout: .seconds(60)) == 1, "\(interrupted.capturedOutput())")
                let summary = interrupted.allStdoutLines.compactMap(TransferHarness.json).last
                let failure = ((summary?["peers"] as? [[String: Any]])?.first?["failure"] as? String) ?? ""
                #expect(failure.contains("shutting down"), "the sender is told the receiver stopped: \(failure)")
                #expect(try TransferHarness.visibleFiles(in: inbox.path).isEmpty)
                let staging = inbox.path + "/.ferry-staging"
                let staged = try FileManager.default.contentsOfDirectory(atPath: staging)
                    .compactMap { try? FileManager.default.attributesOfItem(atPath: staging + "/" + $0)[.size] as? Int }
                #expect(staged.contains { $0 > 0 }, "staged data is kept for a resume: \(staged)")

                try bed.removeRateLimit(host: bed.hosts[0])
                let (second, secondPort) = try receiver(once: true)
                let resumed = try sender(to: secondPort)
                #expect(try resumed.waitForExit(timeout: .seconds(120)) == 0, "\(resumed.capturedOutput())")
                let arrived = try second.nextJSON(timeout: .seconds(120)) { $0["event"] as? String == "file" }
                #expect((arrived["resumedBytes"] as? Int ?? 0) > 0, "resumed, not started over: \(arrived)")
                #expect(try second.waitForExit(timeout: .seconds(60)) == 0)
                #expect(try TransferHarness.sha256(inbox.path + "/big.bin") == TransferHarness.sha256(file.path))
            }
        }

        @Test func theReceiverSaysSoAndExitsOneWhenItsDirectoryIsRemoved() throws {
            let harness = try TransferHarness()
            let directory = harness.inbox.path + "/incoming"
            try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: false)
            let (receiver, port) = try harness.receiver(into: directory, once: false)
            // A transfer first, so that the engine holds the directory open (then inotify alone says nothing).
            let before = try harness.files.text("before.txt", size: 1000)
            #expect(try harness.send([before.path], to: [port]).status == 0)
            try FileManager.default.removeItem(atPath: directory)
            #expect(try receiver.waitForExit(timeout: .seconds(60)) == 1, "\(receiver.capturedOutput())")
            let error = receiver.allStdoutLines.compactMap(TransferHarness.json).first {
                $0["event"] as? String == "error"
            }
            let message = error?["message"] as? String ?? ""
            #expect(message.contains(directory) && message.contains("removed"), "\(receiver.capturedOutput())")
            #expect(!FileManager.default.fileExists(atPath: directory), "not recreated behind the user's back")
        }

        @Test func theReceiverSaysSoAndExitsOneWhenItsDiskIsUnmounted() throws {
            guard try TmpfsMount.requireAvailability() else {
                try Test.cancel("tmpfs unavailable: \(TmpfsMount.availabilityReason)")
            }
            let harness = try TransferHarness()
            let disk = try TmpfsMount(size: 8 << 20)
            defer { disk.unmount() }
            let (receiver, port) = try harness.receiver(into: disk.path, once: false)
            let before = try harness.files.text("before.txt", size: 1000)
            #expect(try harness.send([before.path], to: [port]).status == 0)
            // Busy (the receiver holds it open), so unmounted lazily: the path then names the empty mount point.
            disk.unmount()
            #expect(try receiver.waitForExit(timeout: .seconds(60)) == 1, "\(receiver.capturedOutput())")
            let error = receiver.allStdoutLines.compactMap(TransferHarness.json).first {
                $0["event"] as? String == "error"
            }
            #expect((error?["message"] as? String ?? "").contains(disk.path), "\(receiver.capturedOutput())")
        }

        @Test func withoutATerminalTheReceiverLogsOneLinePerEventAndNoEscapes() throws {
            let harness = try TransferHarness()
            let files = try (0..<3).map { try harness.files.random("photo-\($0).jpg", size: 3 << 20, seed: UInt64($0)) }
            // stdin and stderr are pipes here, as under systemd or `ferry receive </dev/null 2>log`.
            let receiver = try harness.chat.registry.startFerry(
                [
                    "receive", "--into", harness.inbox.path, "--accept", "all", "--once", "--session", harness.session,
                    "--name", "inbox", "--port", "0", "--interface", "lo",
                ], environment: harness.chat.environment("inbox"))
            receiver.closeStdin()
            let listening = try receiver.waitForErrorLine { $0.hasPrefix("receiving into") }
            let digits = listening.components(separatedBy: "(port ").last?.prefix { $0.isNumber } ?? ""
            let port = try #require(Int(digits), "\(listening)")
            #expect(try harness.send(files.map(\.path), to: [port]).status == 0)
            #expect(try receiver.waitForExit(timeout: .seconds(60)) == 0, "\(receiver.capturedOutput())")
            let log = try receiver.readAllStderr()
            #expect(!log.contains("\r") && !log.contains("\u{1B}"), "no bars, no escapes: \(log.debugDescription)")
            #expect(!log.contains("\n\n"), "\(log)")
            let lines = log.split(separator: "\n")
            for index in 0..<3 {
                #expect(lines.filter { $0.contains("received photo-\(index).jpg") }.count == 1, "\(log)")
            }
        }

        /// Issue 28, 15: a journal showed `Ctrl-C to stop`, nothing per accepted offer, nothing on SIGTERM.
        @Test func aServicesLogSaysEachAcceptedOfferAndTheSIGTERMThatStopsIt() throws {
            let harness = try TransferHarness()
            let files = try (0..<3).map { try harness.files.random("log-\($0).bin", size: 4096, seed: UInt64($0)) }
            let receiver = try harness.chat.registry.startFerry(
                [
                    "receive", "--into", harness.inbox.path, "--accept", "all", "--session", harness.session,
                    "--name", "inbox", "--port", "0", "--interface", "lo",
                ], environment: harness.chat.environment("inbox"))
            receiver.closeStdin()
            let listening = try receiver.waitForErrorLine { $0.hasPrefix("receiving into") }
            #expect(!listening.contains("Ctrl-C"), "\(listening)")
            let digits = listening.components(separatedBy: "(port ").last?.prefix { $0.isNumber } ?? ""
            let port = try #require(Int(digits), "\(listening)")
            #expect(try harness.send(files.map(\.path), to: [port]).status == 0)
            _ = try receiver.waitForErrorLine { $0.contains("received log-2.bin") }
            #expect(try receiver.terminate() == 143)
            let log = try receiver.readAllStderr()
            let lines = log.split(separator: "\n").map(String.init)
            #expect(lines.filter { $0 == "outbox offers 3 files (12.0 KiB): accepted" }.count == 1, "\(log)")
            #expect(lines.last == "stopping: SIGTERM", "\(log)")
        }

        /// Issue 28, 16 and 15: `watching DIR (0 files already there are not sent); ...; Ctrl-C to stop` in a log.
        @Test func watchWithoutATerminalSaysNoZeroClauseAndNoCtrlC() throws {
            let harness = try TransferHarness()
            let watched = harness.source.path + "/empty"
            try FileManager.default.createDirectory(atPath: watched, withIntermediateDirectories: false)
            let watcher = try harness.chat.registry.startFerry(
                [
                    "watch", watched, "--to", "127.0.0.1:1", "--session", harness.session, "--name", "outbox",
                    "--interface", "lo",
                ], environment: harness.chat.environment("outbox"))
            watcher.closeStdin()
            let line = try watcher.waitForErrorLine { $0.hasPrefix("watching") }
            #expect(line.hasSuffix("; new files go to 127.0.0.1:1"), "\(line)")
            #expect(!line.contains("0 files") && !line.contains("Ctrl-C"), "\(line)")
            _ = try watcher.terminate()
        }

        @Test(arguments: ["removed", "moved"])
        func watchSaysSoAndExitsOneWhenItsDirectoryGoes(_ how: String) throws {
            let harness = try TransferHarness()
            let watched = harness.source.path + "/watched"
            try FileManager.default.createDirectory(atPath: watched, withIntermediateDirectories: false)
            let (receiver, port) = try harness.receiver(once: false)
            let watcher = try harness.chat.registry.startFerry(
                [
                    "watch", watched, "--to", "127.0.0.1:\(port)", "--json", "--session", harness.session,
                    "--interface", "lo", "--name", "camera",
                ],
                environment: harness.chat.environment("camera"))
            _ = try watcher.nextJSON { $0["event"] as? String == "watching" }
            // One file through, so that the watcher has sent from the directory before it goes.
            try Data(repeating: 66, count: 5000).write(to: URL(fileURLWithPath: watched + "/one.txt"))
            _ = try receiver.nextJSON(timeout: .seconds(60)) { $0["event"] as? String == "file" }
            if how == "removed" {
                try FileManager.default.removeItem(atPath: watched)
            } else {
                try FileManager.default.moveItem(atPath: watched, toPath: harness.source.path + "/elsewhere")
            }
            #expect(try watcher.waitForExit(timeout: .seconds(60)) == 1, "\(watcher.capturedOutput())")
            let stderr = try watcher.readAllStderr()
            #expect(stderr.contains("Error:") && stderr.contains(watched), "\(stderr)")
            #expect(stderr.contains("stopped watching"), "\(stderr)")
            _ = try? receiver.terminate()
        }
    }
}
