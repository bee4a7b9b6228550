import Foundation
import FerryTestSupport
import FerryWire
import Glibc
import Testing

extension IntegrationTests {
    /// Issue 9, 6 ("Messages that mislead"), with real `ferry` processes on loopback: what a person reads after a
    /// denial, for JPEGs, for a changed key, for a cancelled send, for odd paths and names, for a full disk.
    @Suite(.serialized) struct MessageTests {
        /// The sender's text output (stderr) once it has exited.
        static func finish(_ process: FerryProcess) throws -> (status: Int32, stderr: String) {
            let status = try process.waitForExit(timeout: .seconds(240))
            return (status, try process.readAllStderr())
        }

        /// `ferry send FILE... --to 127.0.0.1:PORT` in text mode.
        static func textSender(_ harness: TransferHarness, _ paths: [String], port: Int, _ extra: [String] = [])
            throws -> FerryProcess
        {
            try harness.chat.registry.startFerry(
                ["send"] + paths + [
                    "--to", "127.0.0.1:\(port)", "--session", harness.session, "--name", "outbox",
                    "--interface", "lo",
                ] + extra,
                environment: harness.chat.environment("outbox"))
        }

        @Test func aDeniedOfferSaysNothingWasSentAndWhoDeniedIt() throws {
            let harness = try TransferHarness()
            let file = try harness.files.random("a.bin", size: 10_000)
            // No terminal to ask: the receiver denies every offer from a stranger.
            let (receiver, port) = try harness.receiver(accept: "ask")
            let (status, stderr) = try Self.finish(try Self.textSender(harness, [file.path], port: port))
            _ = try? receiver.terminate()
            #expect(status == 1, "\(stderr)")
            let last = stderr.split(separator: "\n").last.map(String.init) ?? ""
            #expect(last.hasPrefix("nothing sent: inbox denied the offer ("), "\(stderr)")
            #expect(!stderr.contains("sent 1 file"), "\(stderr)")
            #expect(!stderr.contains("B/s"), "\(stderr)")
        }

        /// The text goes with `--compress zstd`: `auto` sends raw to a peer on loopback (compressing there only
        /// costs), so only a forced mode compresses here. The JPEG goes with `auto`, which never compresses it (by its
        /// media type, `CompressionPolicyTests`; and on loopback not at all): the summary says nothing of compression.
        @Test func compressionIsMentionedForTextButNotForAJPEG() throws {
            let harness = try TransferHarness()
            let photo = try harness.files.jpeg("photo.jpg", width: 1600, height: 1200)
            let text = try harness.files.text("notes.txt", size: 2 << 20)
            var summaries: [String] = []
            for file in [photo, text] {
                let (receiver, port) = try harness.receiver()
                let mode = file == text ? "zstd" : "auto"
                let sender = try Self.textSender(harness, [file.path], port: port, ["--compress", mode])
                let (status, stderr) = try Self.finish(sender)
                #expect(status == 0, "\(stderr)")
                #expect(try receiver.waitForExit(timeout: .seconds(60)) == 0)
                summaries.append(
                    stderr.split(separator: "\n").first { $0.hasPrefix("sent 1 file") }.map(String.init) ?? stderr)
            }
            #expect(!summaries[0].contains("compression"), "nothing was compressed: \(summaries[0])")
            // "(1.2 MiB/s, compression 4.08x)", or "(compression 4.08x)" after a time shown as "under 0.1 s".
            #expect(summaries[1].contains("compression "), "\(summaries[1])")
            #expect(!summaries[1].contains("compression 0.") && !summaries[1].contains("compression 1.0"))
        }

        /// Not fixed yet (see the known issue below): the sender's cancel and goodbye are queued behind the link
        /// writer's backlog of chunks, and the writer then closes the socket (with the receiver's acks unread) within
        /// the session's one-second close, so the receiver reports a lost link.
        @Test func aSenderInterruptedByCtrlCTellsTheReceiverItCancelled() async throws {
            let harness = try TransferHarness()
            let file = try harness.files.random("big.bin", size: 64 << 20)
            let (receiver, port) = try harness.receiver()
            // A slow link: every chunk the proxy reads waits before it is forwarded, so the send is under way for
            // as long as the test needs and the sender has a backlog of chunks queued when it is interrupted.
            let proxy = try FaultProxy(targetPort: UInt16(port), mode: .delay(.milliseconds(20)))
            defer { proxy.close() }
            // -v: the sender's log says which path failed the transfer and whether its cancel was queued.
            let sender = try harness.sender([file.path], to: [Int(proxy.port)], ["--compress", "none", "-v"])
            // Mid-transfer: the receiver has accepted and stored some chunks.
            _ = try receiver.nextJSON(timeout: .seconds(120)) { $0["event"] as? String == "progress" }
            sender.signal(SIGINT)
            #expect(try sender.waitForExit(timeout: .seconds(60)) == 130, "\(sender.capturedOutput())")
            let finished = try receiver.nextJSON(timeout: .seconds(120)) { $0["event"] as? String == "finished" }
            let failure = finished["failure"] as? String ?? ""
            _ = try? receiver.terminate()
            #expect(failure.hasPrefix("the sender cancelled"), "\(finished)\n\(sender.capturedOutput())")
            #expect(!failure.contains("link was lost"), "\(finished)")
        }

        @Test func anotherKeyUnderAPinnedNameIsOneErrorLineAndGetsNothing() async throws {
            let harness = try TransferHarness()
            let file = try harness.files.random("for-bob.bin", size: 1000, seed: 7)
            let bob = try await harness.chat.deviceID(of: "bob")
            try await harness.chat.trust(bob, as: "bob", by: "outbox")
            // Another install that calls itself bob, found by discovery on lo.
            let impostor = try harness.chat.registry.startFerry(
                [
                    "receive", "--json", "--into", harness.inbox.path, "--accept", "all", "--once", "--session",
                    harness.session, "--name", "bob", "--port", "0", "--interface", "lo",
                ], environment: harness.chat.environment("mallory"))
            _ = try impostor.nextJSON(timeout: .seconds(60)) { $0["event"] as? String == "listening" }
            let sender = try harness.chat.registry.startFerry(
                [
                    "send", file.path, "--to", "bob", "--session", harness.session, "--name", "outbox", "--interface",
                    "lo",
                ], environment: harness.chat.environment("outbox"))
            let (status, stderr) = try Self.finish(sender)
            _ = try? impostor.terminate()
            // Only another key answers to the pinned name (issue 28, 9): nothing goes to it, and the person reads one
            // error naming both devices (after the note that ferry waits for the pinned one), never a warning.
            #expect(status == 1, "\(stderr)")
            let lines = stderr.split(separator: "\n").map(String.init)
            let errors = lines.filter { $0.hasPrefix("Error:") }
            let short = try #require(DeviceID(string: bob)).shortDescription
            #expect(errors.count == 1, "said once: \(stderr)")
            #expect(
                errors.first?.hasPrefix("Error: 'bob' is pinned to device \(short), which is not here;") == true,
                "\(stderr)")
            #expect(errors.first?.contains("another device calls itself that: bob (") == true, "\(stderr)")
            #expect(!stderr.contains("WARNING"), "\(stderr)")
            let received = try FileManager.default.contentsOfDirectory(atPath: harness.inbox.path)
            #expect(!received.contains("for-bob.bin"), "the other device got the file: \(received)")
        }

        @Test func emptyTooLongAndHugeInputAreNamedForWhatTheyAre() throws {
            let harness = try TransferHarness()
            let file = try harness.files.random("a.bin", size: 10)
            func run(_ arguments: [String]) throws -> (status: Int32, stderr: String) {
                try Self.finish(
                    try harness.chat.registry.startFerry(
                        arguments + ["--session", harness.session, "--interface", "lo"],
                        environment: harness.chat.environment("outbox")))
            }
            let empty = try run(["send", "", "--to", "bob"])
            #expect(empty == (1, "Error: an empty file name was given; name a file or directory to send."))
            let long = try run([
                "send", harness.source.path + "/" + String(repeating: "d/", count: 2500) + "x", "--to", "bob",
            ])
            #expect(long.status == 1)
            #expect(long.stderr.contains(": the path is too long ("), "\(long.stderr)")
            #expect(long.stderr.count < 300, "\(long.stderr)")
            let huge = String(repeating: "x", count: 100_000)
            let target = try run(["send", file.path, "--to", huge, "--wait", "0"])
            #expect(target.status == 1)
            #expect(target.stderr.hasPrefix("Error: no peer named " + String(repeating: "x", count: 38) + "..."))
            #expect(
                target.stderr.contains(" (100000 characters) was found in session "), "\(target.stderr.prefix(400))")
            #expect(target.stderr.count < 400, "\(target.stderr.prefix(400))")
        }

        @Test func aFullDiskRefusalDoesNotShowTheSenderTheReceiversPath() throws {
            let harness = try TransferHarness()
            // A sparse file larger than the free space of the receiver's disk: offered, never read.
            let url = URL(fileURLWithPath: harness.source.path + "/huge.bin")
            #expect(FileManager.default.createFile(atPath: url.path, contents: nil))
            let handle = try FileHandle(forWritingTo: url)
            try handle.truncate(atOffset: 1 << 43)
            try handle.close()
            var disk = statvfs()
            #expect(statvfs(harness.inbox.path, &disk) == 0)
            try #require(UInt64(disk.f_bavail) * UInt64(disk.f_frsize) < 1 << 43, "the disk has 8 TiB free")
            let (receiver, port) = try harness.receiver()
            let (status, stderr) = try Self.finish(try Self.textSender(harness, [url.path], port: port))
            _ = try? receiver.terminate()
            #expect(status == 1, "\(stderr)")
            #expect(stderr.contains("not enough free disk space"), "\(stderr)")
            #expect(stderr.contains("the receiving directory has "), "\(stderr)")
            #expect(!stderr.contains(harness.inbox.path), "\(stderr)")
        }
    }
}
