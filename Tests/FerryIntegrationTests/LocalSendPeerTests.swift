import Foundation
import FerryTestSupport
import Testing

extension IntegrationTests {
    /// The LocalSend test peers (issue 29) work peer to peer, without ferry, between network namespaces as separate
    /// hosts: the harness ferry's own LocalSend tests build on. If one of these fails, a ferry LocalSend test failing
    /// beside it says nothing about ferry.
    @Suite("LocalSend test peers", .serialized)
    struct LocalSendPeerTests {
        /// Runs `body` on a fresh bed of `hosts` hosts, when network namespaces and every peer of `peers` can run
        /// (skipped visibly otherwise; FERRY_REQUIRE_NETNS=1 makes it fail, and so does a venv without `localsend`).
        static func onBed(
            hosts: Int, peers: [LocalSendPeers.Kind], _ body: (TestBed, TemporaryDirectory) async throws -> Void
        ) async throws {
            guard try TestBed.requireAvailability() else {
                try Test.cancel("network namespaces unavailable: \(TestBed.isAvailable.reason)")
            }
            for peer in peers {
                guard try LocalSendPeers.requireAvailability(peer) else {
                    try Test.cancel("LocalSend test peer \(peer.rawValue) not installed: run scripts/localsend-peers")
                }
            }
            TestBed.removeStale()
            try await TestBed.with(hosts: hosts, name: "ls") { bed in
                try await TemporaryDirectory.with(prefix: "ferry-localsend-files") { files in
                    try await body(bed, files)
                }
            }
        }

        @Test func localsenddSendsAFileThatALocalSendCLIReceiverStoresIntact() async throws {
            try await Self.onBed(hosts: 2, peers: [.localsendd, .localsendCLI]) { bed, files in
                let (senderHost, receiverHost) = (bed.hosts[0], bed.hosts[1])
                // localsendd pins the fingerprint a peer announced and compares it case-sensitively with its own
                // upper-case hex of the certificate; localsend-cli announces lower-case hex, so a localsendd that heard
                // its announcement refuses to send to it ("certificate did not match"). Without a multicast route the
                // receiver's announcements never leave its host, and localsendd sends to the bare address unpinned.
                _ = try bed.run(host: receiverHost, ["ip", "route", "del", "224.0.0.0/4"]).requireSuccess()
                let file = try TestFiles(in: files).random("photo.bin", size: 3 << 20, seed: 29)
                let receiver = try LocalSendCLIReceiver(on: receiverHost)
                let sender = try LocalSendDaemon(alias: "alice", on: senderHost)

                let outcome = try sender.send([file], to: receiverHost.address)
                #expect(outcome.status == 0 && outcome.kind == "sent", "\(outcome) \(sender.process.capturedOutput())")
                let saved = try receiver.waitForSaved()
                #expect(saved["name"] as? String == "photo.bin")
                let arrived = receiver.outputDirectory.appendingPathComponent("photo.bin")
                #expect(try Data(contentsOf: arrived) == Data(contentsOf: file))
            }
        }

        @Test func localsenddSendsManyFilesIncludingAnEmptyOneThatALocalSendCLIReceiverStoresIntact() async throws {
            try await Self.onBed(hosts: 2, peers: [.localsendd, .localsendCLI]) { bed, files in
                let (senderHost, receiverHost) = (bed.hosts[0], bed.hosts[1])
                // As above: no announcements from the receiver, so localsendd sends to its address unpinned.
                _ = try bed.run(host: receiverHost, ["ip", "route", "del", "224.0.0.0/4"]).requireSuccess()
                let made = TestFiles(in: files)
                // Not named *.txt: localsend-cli prints a one-file session of a text/* type instead of saving it.
                let sent = [
                    try made.random("one.bin", size: 300_000, seed: 34), try made.random("two.bin", size: 1, seed: 35),
                    try made.write("empty.bin", bytes: []),
                ]
                let receiver = try LocalSendCLIReceiver(on: receiverHost)
                let sender = try LocalSendDaemon(alias: "alice", on: senderHost)

                let outcome = try sender.send(sent, to: receiverHost.address)
                #expect(outcome.kind == "sent", "\(outcome) \(sender.process.capturedOutput())")
                var saved: [String] = []
                for _ in sent { saved.append(try receiver.waitForSaved()["name"] as? String ?? "") }
                #expect(Set(saved) == ["one.bin", "two.bin", "empty.bin"])
                for file in sent {
                    let arrived = receiver.outputDirectory.appendingPathComponent(file.lastPathComponent)
                    #expect(try Data(contentsOf: arrived) == Data(contentsOf: file), "\(file.lastPathComponent)")
                }
            }
        }

        @Test func localSendCLISendsAFileThatALocalsenddReceiverStoresIntact() async throws {
            try await Self.onBed(hosts: 2, peers: [.localsendd, .localsendCLI]) { bed, files in
                let (senderHost, receiverHost) = (bed.hosts[0], bed.hosts[1])
                let file = try TestFiles(in: files).random("notes.bin", size: 2 << 20, seed: 30)
                let receiver = try LocalSendDaemon(alias: "bob", on: receiverHost)

                let outcome = try LocalSendCLI.send([file], to: receiverHost.address, from: senderHost)
                #expect(
                    outcome.status == 0 && outcome.sentNames == ["notes.bin"] && outcome.errors.isEmpty, "\(outcome)")
                let arrived = receiver.downloadDirectory.appendingPathComponent("notes.bin")
                #expect(try Data(contentsOf: arrived) == Data(contentsOf: file))
                let result = try receiver.state()["result"] as? [String: Any]
                #expect(result?["kind"] as? String == "received", "\(String(describing: result))")
            }
        }

        @Test func aLocalsenddReceiverWithAPinAnswers401WithoutItAndTakesTheFileWithIt() async throws {
            try await Self.onBed(hosts: 2, peers: [.localsendd]) { bed, files in
                let file = try TestFiles(in: files).random("pinned.bin", size: 100_000, seed: 31)
                let receiver = try LocalSendDaemon(alias: "bob", on: bed.hosts[1], pin: "4821")
                let sender = try LocalSendDaemon(alias: "alice", on: bed.hosts[0])

                let refused = try sender.send([file], to: bed.hosts[1].address)
                #expect(refused.kind == "pin_required" && refused.status != 0, "\(refused)")
                #expect(
                    !FileManager.default.fileExists(
                        atPath: receiver.downloadDirectory.appendingPathComponent("pinned.bin").path))
                let accepted = try sender.send([file], to: bed.hosts[1].address, pin: "4821")
                #expect(accepted.kind == "sent", "\(accepted)")
                let arrived = receiver.downloadDirectory.appendingPathComponent("pinned.bin")
                #expect(try Data(contentsOf: arrived) == Data(contentsOf: file))
            }
        }

        @Test func twoLocalsenddDaemonsDiscoverEachOtherByMulticastWithTheirCertificateFingerprints() async throws {
            try await Self.onBed(hosts: 2, peers: [.localsendd]) { bed, _ in
                let alice = try LocalSendDaemon(alias: "alice", on: bed.hosts[0])
                let bob = try LocalSendDaemon(alias: "bob", on: bed.hosts[1])

                let bobAsSeen = try alice.waitForDevice(alias: "bob")
                let aliceAsSeen = try bob.waitForDevice(alias: "alice")
                #expect(bobAsSeen["fingerprint"] as? String == bob.fingerprint)
                #expect(aliceAsSeen["fingerprint"] as? String == alice.fingerprint)
                #expect(bobAsSeen["protocol"] as? String == "https")
                #expect((aliceAsSeen["ip"] as? String ?? "").hasSuffix(bed.hosts[0].address))
            }
        }

        @Test func aLocalSendCLIScanFindsALocalsenddDaemonThatRegistersBack() async throws {
            try await Self.onBed(hosts: 2, peers: [.localsendd, .localsendCLI]) { bed, _ in
                let bob = try LocalSendDaemon(alias: "bob", on: bed.hosts[1])
                let found = try LocalSendCLI.scan(from: bed.hosts[0], seconds: 5)
                let entry = found.first { $0["alias"] as? String == "bob" }
                #expect(entry?["ip"] as? String == bed.hosts[1].address, "\(found) \(bob.process.capturedOutput())")
            }
        }

        @Test func localsenddSendsAFileThatALocalSendAppReceiverStoresIntact() async throws {
            try await Self.onBed(hosts: 2, peers: [.localsendd, .localsend]) { bed, files in
                let file = try TestFiles(in: files).random("movie.bin", size: 4 << 20, seed: 32)
                let receiver = try LocalSendApp(.receive, alias: "carol", on: bed.hosts[1])
                let sender = try LocalSendDaemon(alias: "alice", on: bed.hosts[0])

                let outcome = try sender.send([file], to: bed.hosts[1].address)
                #expect(outcome.kind == "sent", "\(outcome) \(receiver.process.capturedOutput())")
                let arrived = receiver.downloadDirectory.appendingPathComponent("movie.bin")
                #expect(try Data(contentsOf: arrived) == Data(contentsOf: file))
            }
        }

        @Test func aLocalSendAppSenderUploadsChunkedToALocalSendAppReceiverThatAnnouncedItself() async throws {
            try await Self.onBed(hosts: 2, peers: [.localsend]) { bed, files in
                let file = try TestFiles(in: files).random("chunked.bin", size: 1 << 20, seed: 33)
                let receiver = try LocalSendApp(.receive, alias: "carol", on: bed.hosts[1])
                // The sender announces once when it starts; the receiver registers back, and the sender uploads to
                // every device that registers (after asking its /api/localsend/v1/info).
                let sender = try LocalSendApp(.send(file), alias: "dave", on: bed.hosts[0])

                _ = try receiver.waitForUpload()
                let arrived = receiver.downloadDirectory.appendingPathComponent("chunked.bin")
                #expect(try Data(contentsOf: arrived) == Data(contentsOf: file), "\(sender.process.capturedOutput())")
            }
        }

        @Test func aVenvWithoutTheLocalsendPeerFailsItsTestsWithTheScriptsReasonInsteadOfSkipping() throws {
            let venv = try TemporaryDirectory(prefix: "ferry-localsend-venv")
            defer { venv.remove() }
            let bin = venv.url.appendingPathComponent("bin")
            try FileManager.default.createDirectory(at: bin, withIntermediateDirectories: true)
            let cli = bin.appendingPathComponent("localsend-cli")
            try "#!/bin/sh\n".write(to: cli, atomically: true, encoding: .utf8)
            try FileManager.default.setAttributes([.posixPermissions: 0o755], ofItemAtPath: cli.path)
            let reason = "no Python 3.12 found: localsend 0.1.2 needs Python >= 3.12"
            try reason.write(
                to: venv.url.appendingPathComponent("localsend-unavailable"), atomically: true, encoding: .utf8)

            #expect(try LocalSendPeers.requireAvailability(.localsendCLI, venv: venv.url))
            #expect {
                try LocalSendPeers.requireAvailability(.localsend, venv: venv.url)
            } throws: { error in
                "\(error)".contains(reason)
            }
            // A peer the venv lacks skips visibly, unless FERRY_REQUIRE_NETNS=1 demands it (CI): then it fails too.
            if Requirement.isDemanded {
                #expect(throws: TestSupportError.self) {
                    try LocalSendPeers.requireAvailability(.localsendd, venv: venv.url)
                }
            } else {
                #expect(try !LocalSendPeers.requireAvailability(.localsendd, venv: venv.url))
            }
        }
    }
}
