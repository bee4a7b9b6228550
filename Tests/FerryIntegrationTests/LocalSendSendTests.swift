import FerrySecurity
import FerryTestSupport
import Foundation
import Testing

extension IntegrationTests {
    /// `ferry send` to LocalSend receivers (issue 29, "Sending"): a real `ferry send` in one network namespace, the PyPI
    /// receivers (localsendd, localsend-cli, localsend) in others, found by LocalSend discovery or named by address.
    /// Files arrive complete with the same bytes; a receiver whose certificate is not the announced one gets nothing.
    @Suite("LocalSend send", .serialized)
    struct LocalSendSendTests {
        /// What one `ferry send --json` run ended with.
        struct SendRun {
            let status: Int32
            let summary: [String: Any]
            let output: String

            /// The summary's only peer.
            var peer: [String: Any] { (summary["peers"] as? [[String: Any]])?.first ?? [:] }
            var failure: String { peer["failure"] as? String ?? "" }
        }

        /// Runs `ferry send --json ARGUMENTS` on `host` with its own configuration (`config`) and waits for its end.
        static func send(
            _ bed: TestBed, from host: TestHost, _ arguments: [String], config: TemporaryDirectory,
            session: String = "ls-\(UInt32.random(in: 0...UInt32.max))", environment: [String: String] = [:]
        ) throws -> SendRun {
            let process = try bed.startFerry(
                on: host,
                ["send", "--json"] + arguments + [
                    "--session", session, "--name", "ferry-out", "--port", "0",
                    "--wait", "20",
                ],
                environment: environment.merging(["XDG_CONFIG_HOME": config.path]) { $1 })
            defer { _ = try? process.terminate() }
            let summary = (try? process.nextJSON(timeout: .seconds(120)) { $0["event"] as? String == "summary" }) ?? [:]
            let status = try process.waitForExit(timeout: .seconds(60))
            return SendRun(status: status, summary: summary, output: process.capturedOutput())
        }

        /// `album/a.bin`, `album/sub/b.bin` and, with `empty`, `album/sub/empty.bin` under `files`; returns the folder.
        static func album(in files: TemporaryDirectory, empty: Bool = false) throws -> URL {
            let folder = files.url.appendingPathComponent("album")
            try FileManager.default.createDirectory(
                at: folder.appendingPathComponent("sub"), withIntermediateDirectories: true)
            try Data(TestFiles.randomBytes(count: 70_001, seed: 5)).write(to: folder.appendingPathComponent("a.bin"))
            try Data(TestFiles.randomBytes(count: 130_003, seed: 6)).write(
                to: folder.appendingPathComponent("sub/b.bin"))
            if empty { try Data().write(to: folder.appendingPathComponent("sub/empty.bin")) }
            return folder
        }

        static func withConfig(_ body: (TemporaryDirectory) async throws -> Void) async throws {
            let config = try TemporaryDirectory(prefix: "ferry-ls-send-config")
            defer { config.remove() }
            try await body(config)
        }

        /// localsendd keeps only the last component of a name (docs/LOCALSEND.md, "What each peer does"); the apps keep
        /// folders inside their destination.
        @Test func aFileAndAFolderGoToALocalsenddReceiverFoundByItsAliasAndArriveIntact() async throws {
            try await LocalSendPeerTests.onBed(hosts: 2, peers: [.localsendd]) { bed, files in
                try await Self.withConfig { config in
                    let receiver = try LocalSendDaemon(alias: "phone", on: bed.hosts[1])
                    let photo = try TestFiles(in: files).random("photo.bin", size: 3 << 20, seed: 3)
                    let album = try Self.album(in: files)
                    let run = try Self.send(
                        bed, from: bed.hosts[0], [photo.path, album.path, "--to", "phone"], config: config)
                    #expect(run.status == 0, "\(run.output)")
                    #expect(run.peer["protocol"] as? String == "localsend", "\(run.summary)")
                    #expect(run.peer["filesSucceeded"] as? Int == 3, "\(run.summary)")
                    #expect(run.peer["peerID"] as? String == receiver.fingerprint)
                    let arrived = receiver.downloadDirectory
                    #expect(
                        try Data(contentsOf: arrived.appendingPathComponent("photo.bin")) == Data(contentsOf: photo))
                    #expect(
                        try Data(contentsOf: arrived.appendingPathComponent("a.bin"))
                            == Data(contentsOf: album.appendingPathComponent("a.bin")))
                    #expect(
                        try Data(contentsOf: arrived.appendingPathComponent("b.bin"))
                            == Data(contentsOf: album.appendingPathComponent("sub/b.bin")))
                }
            }
        }

        /// localsendd's PIN: ferry gives the one in --pin-file; a wrong one is refused (401 once more: ferry cannot ask a
        /// file again) and nothing arrives; the right one delivers.
        @Test func aPinFromPinFileReachesLocalsenddAndAWrongOneFailsClearlyWithNothingReceived() async throws {
            try await LocalSendPeerTests.onBed(hosts: 2, peers: [.localsendd]) { bed, files in
                try await Self.withConfig { config in
                    let receiver = try LocalSendDaemon(alias: "locked", on: bed.hosts[1], pin: "4321")
                    let photo = try TestFiles(in: files).random("photo.bin", size: 200_000, seed: 7)
                    let wrong = files.url.appendingPathComponent("wrong-pin").path
                    let right = files.url.appendingPathComponent("right-pin").path
                    try "1111\n".write(toFile: wrong, atomically: true, encoding: .utf8)
                    try "4321\n".write(toFile: right, atomically: true, encoding: .utf8)
                    chmod(wrong, 0o600)
                    chmod(right, 0o600)

                    // The right PIN first: localsendd counts ferry's first request (without a PIN) as a wrong attempt, 3
                    // a minute; the right one clears them. Then a wrong one: two attempts, still under its limit.
                    let delivered = try Self.send(
                        bed, from: bed.hosts[0], [photo.path, "--to", "locked", "--pin-file", right], config: config)
                    #expect(delivered.status == 0, "\(delivered.output)")
                    #expect(
                        try Data(contentsOf: receiver.downloadDirectory.appendingPathComponent("photo.bin"))
                            == Data(contentsOf: photo))
                    try FileManager.default.removeItem(
                        at: receiver.downloadDirectory.appendingPathComponent("photo.bin"))

                    let refused = try Self.send(
                        bed, from: bed.hosts[0], [photo.path, "--to", "locked", "--pin-file", wrong], config: config)
                    #expect(refused.status == 1, "\(refused.output)")
                    #expect(refused.failure.contains("refused the PIN in --pin-file"), "\(refused.output)")
                    let nothing = try? FileManager.default.contentsOfDirectory(atPath: receiver.downloadDirectory.path)
                    #expect((nothing ?? []).isEmpty)
                }
            }
        }

        /// A `--pin-file` PIN goes only to a receiver that asked for one (401): a receiver without a PIN never sees it.
        /// No PyPI receiver logs its request lines, so the receiver here is a small HTTPS server (Python's `ssl`, its own
        /// certificate, pinned as a person would) that prints each request line and takes the upload.
        @Test func aPinFromPinFileIsNotSentToAReceiverThatAsksForNone() async throws {
            try await LocalSendPeerTests.onBed(hosts: 2, peers: []) { bed, files in
                try await Self.withConfig { config in
                    let script = files.url.appendingPathComponent("recorder.py").path
                    try Self.recorderScript.write(toFile: script, atomically: true, encoding: .utf8)
                    let recorder = try bed.start(
                        on: bed.hosts[1], executable: "/usr/bin/python3", arguments: [script, files.url.path])
                    defer { _ = try? recorder.terminate() }
                    let ready = try recorder.waitForLine(timeout: .seconds(30)) { $0.hasPrefix("fingerprint ") }
                    let fingerprint = String(ready.dropFirst("fingerprint ".count)).uppercased()
                    let trust = try FerryProcess.ferry(
                        ["trust", "add", "--localsend", fingerprint, "--name", "recorder"],
                        environment: ["XDG_CONFIG_HOME": config.path])
                    #expect(try trust.waitForExit() == 0, "\(trust.capturedOutput())")
                    let photo = try TestFiles(in: files).random("photo.bin", size: 30_000, seed: 43)
                    let pin = files.url.appendingPathComponent("pin").path
                    try "9876\n".write(toFile: pin, atomically: true, encoding: .utf8)
                    chmod(pin, 0o600)
                    let run = try Self.send(
                        bed, from: bed.hosts[0],
                        [photo.path, "--to", "\(bed.hosts[1].address):53317", "--pin-file", pin],
                        config: config)
                    #expect(run.status == 0, "\(run.output)")
                    _ = try recorder.waitForLine(timeout: .seconds(30)) { $0.contains("/api/localsend/v2/upload") }
                    let lines = recorder.capturedOutput()
                    #expect(lines.contains("POST /api/localsend/v2/prepare-upload"), "\(lines)")
                    #expect(!lines.contains("pin="), "\(lines)")
                }
            }
        }

        /// An HTTPS LocalSend receiver without a PIN that prints each request line: prepare-upload gets a token for
        /// file 0, an upload is read to its end and answered 200.
        static let recorderScript = """
            import http.server, json, ssl, subprocess, sys, hashlib, os
            folder = sys.argv[1]
            key, cert = os.path.join(folder, "rec.key"), os.path.join(folder, "rec.pem")
            subprocess.run(["openssl", "req", "-x509", "-newkey", "rsa:2048", "-nodes", "-keyout", key, "-out", cert,
                            "-days", "2", "-subj", "/CN=recorder"], check=True, capture_output=True)
            der = ssl.PEM_cert_to_DER_cert(open(cert).read())
            class Handler(http.server.BaseHTTPRequestHandler):
                protocol_version = "HTTP/1.1"
                def log_message(self, *args): pass
                def do_POST(self):
                    print("request " + self.requestline, flush=True)
                    length = int(self.headers.get("Content-Length", "0"))
                    self.rfile.read(length)
                    body = b""
                    if self.path.startswith("/api/localsend/v2/prepare-upload"):
                        body = json.dumps({"sessionId": "s1", "files": {"0": "t0"}}).encode()
                    self.send_response(200)
                    self.send_header("Content-Type", "application/json")
                    self.send_header("Content-Length", str(len(body)))
                    self.end_headers()
                    self.wfile.write(body)
            server = http.server.ThreadingHTTPServer(("0.0.0.0", 53317), Handler)
            context = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
            context.load_cert_chain(cert, key)
            server.socket = context.wrap_socket(server.socket, server_side=True)
            print("fingerprint " + hashlib.sha256(der).hexdigest(), flush=True)
            server.serve_forever()
            """

        /// localsend-cli takes a PIN on its command line and empty files, stores a name as sent (but creates no folder:
        /// a name with one fails there, so flat files here), and prints a one-file text/* session instead of saving it:
        /// `--text` arrives as its `text` event. Named by address: the certificate is the one its announcements name.
        @Test func aLocalSendCLIReceiverWithAPinGetsAFileAnEmptyFileAndAText() async throws {
            try await LocalSendPeerTests.onBed(hosts: 2, peers: [.localsendCLI]) { bed, files in
                try await Self.withConfig { config in
                    let receiver = try LocalSendCLIReceiver(on: bed.hosts[1], pin: "2468")
                    let photo = try TestFiles(in: files).random("photo.bin", size: 1 << 20, seed: 13)
                    let empty = try TestFiles(in: files).write("empty.bin", bytes: [])
                    let pin = files.url.appendingPathComponent("pin").path
                    try "2468\n".write(toFile: pin, atomically: true, encoding: .utf8)
                    chmod(pin, 0o600)
                    let target = "\(bed.hosts[1].address):53317"
                    let run = try Self.send(
                        bed, from: bed.hosts[0], [photo.path, empty.path, "--to", target, "--pin-file", pin],
                        config: config)
                    #expect(run.status == 0, "\(run.output)")
                    #expect(run.peer["filesSucceeded"] as? Int == 2, "\(run.summary)")
                    let out = receiver.outputDirectory
                    #expect(try Data(contentsOf: out.appendingPathComponent("photo.bin")) == Data(contentsOf: photo))
                    #expect(try Data(contentsOf: out.appendingPathComponent("empty.bin")).isEmpty)

                    let text = try Self.send(
                        bed, from: bed.hosts[0], ["--text", "hello from ferry", "--to", target, "--pin-file", pin],
                        config: config)
                    #expect(text.status == 0, "\(text.output)")
                    let shown = try receiver.waitForEvent("text")
                    #expect(shown["text"] as? String == "hello from ferry")
                }
            }
        }

        /// The `localsend` 0.1.2 receiver stores names as sent under ~/Downloads and takes a text as a file: ferry
        /// uploads its bytes when a token comes back (the apps answer 204 and show it).
        @Test func theLocalsendAppReceiverGetsAFolderWithItsPathsAndATextAsAFile() async throws {
            try await LocalSendPeerTests.onBed(hosts: 2, peers: [.localsend]) { bed, files in
                try await Self.withConfig { config in
                    let receiver = try LocalSendApp(.receive, alias: "pyapp", on: bed.hosts[1])
                    let album = try Self.album(in: files)
                    // localsend 0.1.2 answers our announcement only by a register to our HTTPS port, which a send does
                    // not serve (the apps fall back to multicast; it does not): named by address, its certificate is
                    // pinned first, as a person would after comparing it.
                    let fingerprint = try bed.run(
                        host: bed.hosts[0],
                        [
                            "sh", "-c",
                            "openssl s_client -connect \(bed.hosts[1].address):53317 </dev/null 2>/dev/null"
                                + " | openssl x509 -outform DER | sha256sum",
                        ]
                    ).requireSuccess().stdout.prefix(64).uppercased()
                    _ = try FerryProcess.ferry(
                        ["trust", "add", String(fingerprint), "--name", "pyapp"],
                        environment: ["XDG_CONFIG_HOME": config.path]
                    ).waitForExit()
                    let target = "\(bed.hosts[1].address):53317"
                    let run = try Self.send(
                        bed, from: bed.hosts[0], [album.path, "--text", "a note", "--to", target], config: config)
                    #expect(run.status == 0, "\(run.output)")
                    let out = receiver.downloadDirectory
                    #expect(
                        try Data(contentsOf: out.appendingPathComponent("album/sub/b.bin"))
                            == Data(contentsOf: album.appendingPathComponent("sub/b.bin")))
                    #expect(
                        try Data(contentsOf: out.appendingPathComponent("album/a.bin"))
                            == Data(contentsOf: album.appendingPathComponent("a.bin")))
                    #expect(
                        try String(contentsOf: out.appendingPathComponent("message.txt"), encoding: .utf8) == "a note")
                }
            }
        }

        /// A device announces a fingerprint, and its address forwards to another LocalSend receiver (localsendd) whose
        /// certificate differs: ferry fails the handshake at the certificate, before a request byte, and localsendd
        /// gets no session and no file.
        @Test func aReceiverPresentingAnotherCertificateThanAnnouncedGetsNoRequestByte() async throws {
            try await LocalSendPeerTests.onBed(hosts: 3, peers: [.localsendd]) { bed, files in
                try await Self.withConfig { config in
                    let real = try LocalSendDaemon(alias: "real", on: bed.hosts[1])
                    let forged = String(repeating: "AB", count: 32)
                    let script = files.url.appendingPathComponent("forward.py").path
                    try Self.forwarderScript.write(toFile: script, atomically: true, encoding: .utf8)
                    let forwarder = try bed.start(
                        on: bed.hosts[2], executable: "/usr/bin/python3",
                        arguments: [script, bed.hosts[1].address, forged])
                    defer { _ = try? forwarder.terminate() }
                    _ = try forwarder.waitForLine(timeout: .seconds(30)) { $0.contains("forwarding") }
                    let photo = try TestFiles(in: files).random("photo.bin", size: 100_000, seed: 9)
                    let run = try Self.send(bed, from: bed.hosts[0], [photo.path, "--to", "impostor"], config: config)
                    #expect(run.status == 1, "\(run.output)")
                    #expect(run.failure.contains("presented certificate \(real.fingerprint)"), "\(run.output)")
                    let nothing = try? FileManager.default.contentsOfDirectory(atPath: real.downloadDirectory.path)
                    #expect((nothing ?? []).isEmpty)
                    #expect(!real.process.capturedOutput().contains("incoming"), "\(real.process.capturedOutput())")
                }
            }
        }

        /// A TCP forwarder on 53317 to the address given, announcing alias "impostor" with the fingerprint given by
        /// multicast every second.
        /// A bare `HOST:53317` is decided by a verified record only: a forged announcement for that address (unverified:
        /// our register to it fails at the certificate) does not make it "discovered", so without a terminal the address
        /// is refused unless the certificate it presents is pinned (nothing sent to the localsendd behind it).
        @Test func aForgedAnnouncementDoesNotMakeABareAddressDiscovered() async throws {
            try await LocalSendPeerTests.onBed(hosts: 3, peers: [.localsendd]) { bed, files in
                try await Self.withConfig { config in
                    let real = try LocalSendDaemon(alias: "real", on: bed.hosts[1])
                    let script = files.url.appendingPathComponent("forward.py").path
                    try Self.forwarderScript.write(toFile: script, atomically: true, encoding: .utf8)
                    let forwarder = try bed.start(
                        on: bed.hosts[2], executable: "/usr/bin/python3",
                        arguments: [script, bed.hosts[1].address, String(repeating: "CD", count: 32)])
                    defer { _ = try? forwarder.terminate() }
                    _ = try forwarder.waitForLine(timeout: .seconds(30)) { $0.contains("forwarding") }
                    let photo = try TestFiles(in: files).random("photo.bin", size: 10_000, seed: 61)
                    let run = try Self.send(
                        bed, from: bed.hosts[0], [photo.path, "--to", "\(bed.hosts[2].address):53317"], config: config)
                    #expect(run.status == 1, "\(run.output)")
                    #expect(run.failure.contains("\(real.fingerprint) is not pinned here"), "\(run.output)")
                    let nothing = try? FileManager.default.contentsOfDirectory(atPath: real.downloadDirectory.path)
                    #expect((nothing ?? []).isEmpty)
                }
            }
        }

        static let forwarderScript = """
            import asyncio, json, socket, sys
            target, fingerprint, scheme = sys.argv[1], sys.argv[2], sys.argv[3] if len(sys.argv) > 3 else "https"
            async def pipe(reader, writer):
                try:
                    while data := await reader.read(65536):
                        writer.write(data)
                        await writer.drain()
                finally:
                    writer.close()
            async def handle(reader, writer):
                upstream_reader, upstream_writer = await asyncio.open_connection(target, 53317)
                await asyncio.gather(pipe(reader, upstream_writer), pipe(upstream_reader, writer))
            async def announce():
                udp = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
                udp.setsockopt(socket.IPPROTO_IP, socket.IP_MULTICAST_TTL, 2)
                body = json.dumps({"alias": "impostor", "version": "2.1", "deviceModel": "forged", "deviceType": "mobile",
                    "fingerprint": fingerprint, "port": 53317, "protocol": scheme, "download": False,
                    "announce": False}).encode()
                while True:
                    udp.sendto(body, ("224.0.0.167", 53317))
                    await asyncio.sleep(1)
            async def main():
                server = await asyncio.start_server(handle, "0.0.0.0", 53317)
                print("forwarding", flush=True)
                await asyncio.gather(server.serve_forever(), announce())
            asyncio.run(main())
            """

        /// localsendd without a person to ask (not unattended, no control client) declines at once (403); with another
        /// session open it answers 409. Each is said, nothing arrives, and the exit status is 1.
        @Test func aReceiverThatRefusesAndOneThatIsBusyGiveClearMessagesAndAFailingExit() async throws {
            try await LocalSendPeerTests.onBed(hosts: 3, peers: [.localsendd]) { bed, files in
                try await Self.withConfig { config in
                    let declining = try LocalSendDaemon(alias: "declining", on: bed.hosts[1], unattended: false)
                    let busy = try LocalSendDaemon(alias: "busy", on: bed.hosts[2])
                    let photo = try TestFiles(in: files).random("photo.bin", size: 100_000, seed: 11)

                    let refused = try Self.send(
                        bed, from: bed.hosts[0], [photo.path, "--to", "declining"], config: config)
                    #expect(refused.status == 1, "\(refused.output)")
                    #expect(refused.failure.contains("refused by the receiver"), "\(refused.output)")
                    let none = try? FileManager.default.contentsOfDirectory(atPath: declining.downloadDirectory.path)
                    #expect((none ?? []).isEmpty)

                    // Another sender's session, open while ferry asks (localsendd drops it after 45 s without uploads).
                    let other = LocalSendReceiveTests.prepareBody(
                        alias: "other", files: [("x", "x.bin", 10, nil)])
                    let opened = try LocalSendReceiveTests.curl(
                        bed, from: bed.hosts[0], to: bed.hosts[2].address, "/api/localsend/v2/prepare-upload",
                        body: other)
                    #expect(opened.status == 200, "\(opened)")
                    let busyRun = try Self.send(bed, from: bed.hosts[0], [photo.path, "--to", "busy"], config: config)
                    #expect(busyRun.status == 1, "\(busyRun.output)")
                    #expect(busyRun.failure.contains("busy with another session"), "\(busyRun.output)")
                    #expect(
                        !FileManager.default.fileExists(
                            atPath: busy.downloadDirectory.appendingPathComponent("photo.bin").path))
                }
            }
        }

        /// A `ferry receive` in the session with `arguments`, started on `host`; returns once it listens.
        static func ferryReceiver(
            _ bed: TestBed, on host: TestHost, session: String, name: String, inbox: TemporaryDirectory,
            config: TemporaryDirectory, _ arguments: [String] = []
        ) throws -> FerryProcess {
            let process = try bed.startFerry(
                on: host,
                [
                    "receive", "--json", "--into", inbox.path, "--accept", "all", "--name", name, "--port", "0",
                    "--session",
                    session,
                ] + arguments,
                environment: ["XDG_CONFIG_HOME": config.path])
            _ = try process.nextJSON { $0["event"] as? String == "listening" }
            return process
        }

        /// --all in one command: a ferry peer through the engine, a LocalSend receiver beside it by its own upload. The
        /// ferry receiver serves LocalSend too (model "ferry") and is sent to once, through ferry's protocol.
        @Test func oneSendWithAllReachesAFerryReceiverAndALocalSendReceiver() async throws {
            try await LocalSendPeerTests.onBed(hosts: 3, peers: [.localsendd]) { bed, files in
                try await Self.withConfig { config in
                    let session = "ls-mixed-\(UInt32.random(in: 0...UInt32.max))"
                    let inbox = try TemporaryDirectory(prefix: "ferry-ls-mixed-inbox")
                    let receiverConfig = try TemporaryDirectory(prefix: "ferry-ls-mixed-config")
                    defer {
                        inbox.remove()
                        receiverConfig.remove()
                    }
                    let box = try Self.ferryReceiver(
                        bed, on: bed.hosts[1], session: session, name: "box", inbox: inbox, config: receiverConfig)
                    defer { _ = try? box.terminate() }
                    let phone = try LocalSendDaemon(alias: "phone", on: bed.hosts[2])
                    let photo = try TestFiles(in: files).random("photo.bin", size: 1 << 20, seed: 17)
                    let run = try Self.send(
                        bed, from: bed.hosts[0], [photo.path, "--all"], config: config, session: session)
                    #expect(run.status == 0, "\(run.output)")
                    let peers = run.summary["peers"] as? [[String: Any]] ?? []
                    #expect(peers.count == 2, "\(run.summary)")
                    #expect(
                        peers.contains { $0["peer"] as? String == "phone" && $0["protocol"] as? String == "localsend" })
                    #expect(peers.contains { $0["peer"] as? String == "box" && $0["protocol"] == nil })
                    #expect(
                        try Data(contentsOf: phone.downloadDirectory.appendingPathComponent("photo.bin"))
                            == Data(contentsOf: photo))
                    #expect(
                        try Data(contentsOf: inbox.url.appendingPathComponent("photo.bin")) == Data(contentsOf: photo))
                }
            }
        }

        /// A name both a ferry peer and a LocalSend device answer to is refused, nothing sent to either.
        @Test func aNameOfAFerryPeerAndALocalSendDeviceIsAmbiguousAndNothingIsSent() async throws {
            try await LocalSendPeerTests.onBed(hosts: 3, peers: [.localsendd]) { bed, files in
                try await Self.withConfig { config in
                    let session = "ls-twin-\(UInt32.random(in: 0...UInt32.max))"
                    let inbox = try TemporaryDirectory(prefix: "ferry-ls-twin-inbox")
                    let receiverConfig = try TemporaryDirectory(prefix: "ferry-ls-twin-config")
                    defer {
                        inbox.remove()
                        receiverConfig.remove()
                    }
                    let twin = try Self.ferryReceiver(
                        bed, on: bed.hosts[1], session: session, name: "twin", inbox: inbox, config: receiverConfig,
                        ["--no-localsend"])
                    defer { _ = try? twin.terminate() }
                    let phone = try LocalSendDaemon(alias: "twin", on: bed.hosts[2])
                    let photo = try TestFiles(in: files).random("photo.bin", size: 10_000, seed: 19)
                    // Each kind alone is held until the other had 15 s to answer (not the 1.5 s a person waits): on a
                    // loaded machine both are heard for sure, and the run ends as soon as both are.
                    let run = try Self.send(
                        bed, from: bed.hosts[0], [photo.path, "--to", "twin"], config: config, session: session,
                        environment: ["FERRY_LOCALSEND_SETTLE_MS": "15000"])
                    #expect(run.status == 1, "\(run.output)")
                    #expect(run.output.contains("names a ferry peer and a LocalSend device"), "\(run.output)")
                    #expect(
                        !FileManager.default.fileExists(
                            atPath: phone.downloadDirectory.appendingPathComponent("photo.bin").path))
                    #expect(try TransferHarness.visibleFiles(in: inbox.path).isEmpty)
                }
            }
        }

        /// --trusted-only refuses a discovered LocalSend device that is not pinned, naming the command that pins it; once
        /// pinned (`ferry trust add --localsend FINGERPRINT`), it is sent to.
        @Test func trustedOnlyRefusesAnUnpinnedLocalSendDeviceAndSendsOncePinned() async throws {
            try await LocalSendPeerTests.onBed(hosts: 2, peers: [.localsendd]) { bed, files in
                try await Self.withConfig { config in
                    let receiver = try LocalSendDaemon(alias: "phone", on: bed.hosts[1])
                    let photo = try TestFiles(in: files).random("photo.bin", size: 50_000, seed: 23)
                    let refused = try Self.send(
                        bed, from: bed.hosts[0], [photo.path, "--to", "phone", "--trusted-only"], config: config)
                    #expect(refused.status == 1, "\(refused.output)")
                    #expect(
                        refused.failure.contains("ferry trust add --localsend \(receiver.fingerprint) --name phone"),
                        "\(refused.output)")
                    #expect(
                        !FileManager.default.fileExists(
                            atPath: receiver.downloadDirectory.appendingPathComponent("photo.bin").path))

                    let pin = try FerryProcess.ferry(
                        ["trust", "add", "--localsend", receiver.fingerprint, "--name", "phone"],
                        environment: ["XDG_CONFIG_HOME": config.path])
                    #expect(try pin.waitForExit() == 0, "\(pin.capturedOutput())")
                    let sent = try Self.send(
                        bed, from: bed.hosts[0], [photo.path, "--to", "phone", "--trusted-only"], config: config)
                    #expect(sent.status == 0, "\(sent.output)")
                    #expect(
                        try Data(contentsOf: receiver.downloadDirectory.appendingPathComponent("photo.bin"))
                            == Data(contentsOf: photo))
                }
            }
        }

        /// A name pinned here (to a LocalSend fingerprint) names that device only: localsendd announcing the same alias
        /// with another certificate is a stranger, so nothing goes to it (without a terminal nobody would be asked), the
        /// send says why and fails, as for a ferry peer pinned under a name (`.pinnedAbsent`).
        @Test func aStrangerAnnouncingThePinnedNameOfAnAbsentDeviceGetsNothing() async throws {
            try await LocalSendPeerTests.onBed(hosts: 2, peers: [.localsendd]) { bed, files in
                try await Self.withConfig { config in
                    let stranger = try LocalSendDaemon(alias: "phone", on: bed.hosts[1])
                    let pinned = String(repeating: "5A", count: 32)
                    let pin = try FerryProcess.ferry(
                        ["trust", "add", "--localsend", pinned, "--name", "phone"],
                        environment: ["XDG_CONFIG_HOME": config.path])
                    #expect(try pin.waitForExit() == 0, "\(pin.capturedOutput())")
                    let photo = try TestFiles(in: files).random("photo.bin", size: 20_000, seed: 41)
                    let run = try Self.send(bed, from: bed.hosts[0], [photo.path, "--to", "phone"], config: config)
                    #expect(run.status == 1, "\(run.output)")
                    #expect(run.output.contains("'phone' is pinned to"), "\(run.output)")
                    #expect(run.output.contains("not trusted, so nothing is sent to it"), "\(run.output)")
                    let nothing = try? FileManager.default.contentsOfDirectory(atPath: stranger.downloadDirectory.path)
                    #expect((nothing ?? []).isEmpty)
                }
            }
        }

        /// A device announcing `protocol: http` (encryption off in the app) is refused with the reason; ferry never falls
        /// back to plain HTTP (the announcer's forwarder would have passed any connection on to localsendd).
        @Test func aDeviceWithEncryptionOffIsRefusedWithTheReason() async throws {
            try await LocalSendPeerTests.onBed(hosts: 3, peers: [.localsendd]) { bed, files in
                try await Self.withConfig { config in
                    let real = try LocalSendDaemon(alias: "real", on: bed.hosts[1])
                    let script = files.url.appendingPathComponent("forward.py").path
                    try Self.forwarderScript.write(toFile: script, atomically: true, encoding: .utf8)
                    let forwarder = try bed.start(
                        on: bed.hosts[2], executable: "/usr/bin/python3",
                        arguments: [script, bed.hosts[1].address, "random-not-a-hash", "http"])
                    defer { _ = try? forwarder.terminate() }
                    _ = try forwarder.waitForLine(timeout: .seconds(30)) { $0.contains("forwarding") }
                    let photo = try TestFiles(in: files).random("photo.bin", size: 10_000, seed: 29)
                    let run = try Self.send(bed, from: bed.hosts[0], [photo.path, "--to", "impostor"], config: config)
                    #expect(run.status == 1, "\(run.output)")
                    #expect(run.failure.contains("encryption off (protocol http)"), "\(run.output)")
                    let nothing = try? FileManager.default.contentsOfDirectory(atPath: real.downloadDirectory.path)
                    #expect((nothing ?? []).isEmpty)
                }
            }
        }

        /// Ctrl-C during an upload: ferry sends `cancel` for the session, and localsendd ends it as cancelled at once
        /// (two files, so the interrupted first one does not end the session by itself; without the cancel localsendd
        /// keeps it until 45 s without uploads). Exit status 130. The upload goes through a forwarder that holds the
        /// connection after 1 MiB and says so: the Ctrl-C comes while the upload is surely under way.
        @Test func ctrlCDuringAnUploadCancelsTheReceiversSession() async throws {
            try await LocalSendPeerTests.onBed(hosts: 3, peers: [.localsendd]) { bed, files in
                try await Self.withConfig { config in
                    let receiver = try LocalSendDaemon(alias: "phone", on: bed.hosts[1])
                    let forwarder = try Self.holdingForwarder(bed, files, to: receiver, config: config)
                    defer { _ = try? forwarder.terminate() }
                    let big = try TestFiles(in: files).random("big.bin", size: 8 << 20, seed: 31)
                    let small = try TestFiles(in: files).random("small.bin", size: 1000, seed: 37)
                    let process = try bed.startFerry(
                        on: bed.hosts[0],
                        [
                            "send", "--json", big.path, small.path, "--to", "\(bed.hosts[2].address):53317",
                            "--session",
                            "ls-int", "--name", "ferry-out", "--port", "0", "--wait", "20",
                        ],
                        environment: ["XDG_CONFIG_HOME": config.path])
                    defer { _ = try? process.terminate() }
                    _ = try forwarder.waitForLine(timeout: .seconds(120)) { $0.hasPrefix("holding") }
                    #expect(process.isRunning, "\(process.capturedOutput())")
                    process.signal(SIGINT)
                    #expect(try process.waitForExit(timeout: .seconds(60)) == 130, "\(process.capturedOutput())")
                    let result = try receiver.waitForResult(kind: "recv_cancelled", timeout: .seconds(30))
                    #expect(result["kind"] as? String == "recv_cancelled", "\(receiver.process.capturedOutput())")
                    #expect(
                        !FileManager.default.fileExists(
                            atPath: receiver.downloadDirectory.appendingPathComponent("big.bin").path))
                }
            }
        }

        /// A forwarder on `bed.hosts[2]`:53317 to `receiver` (whose certificate is pinned in `config`, as a person
        /// would after comparing it) that holds a connection once 1 MiB of it went towards the receiver, prints
        /// "holding", and goes on at SIGUSR1.
        static func holdingForwarder(
            _ bed: TestBed, _ files: TemporaryDirectory, to receiver: LocalSendDaemon, config: TemporaryDirectory
        ) throws -> FerryProcess {
            let trust = try FerryProcess.ferry(
                ["trust", "add", "--localsend", receiver.fingerprint, "--name", "phone"],
                environment: ["XDG_CONFIG_HOME": config.path])
            #expect(try trust.waitForExit() == 0, "\(trust.capturedOutput())")
            let script = files.url.appendingPathComponent("hold.py").path
            try Self.holdingForwarderScript.write(toFile: script, atomically: true, encoding: .utf8)
            let forwarder = try bed.start(
                on: bed.hosts[2], executable: "/usr/bin/python3", arguments: [script, bed.hosts[1].address])
            _ = try forwarder.waitForLine(timeout: .seconds(30)) { $0.contains("forwarding") }
            return forwarder
        }

        static let holdingForwarderScript = """
            import signal, socket, sys, threading
            target = sys.argv[1]
            released = threading.Event()
            signal.signal(signal.SIGUSR1, lambda *_: released.set())
            def pump(source, sink, hold):
                sent = 0
                held = False
                try:
                    while data := source.recv(65536):
                        sink.sendall(data)
                        sent += len(data)
                        if hold and not held and sent >= (1 << 20):
                            held = True
                            print("holding", flush=True)
                            released.wait()
                except OSError:
                    pass
                finally:
                    for s in (source, sink):
                        try:
                            s.shutdown(socket.SHUT_RDWR)
                        except OSError:
                            pass
            listener = socket.socket()
            listener.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
            listener.bind(("0.0.0.0", 53317))
            listener.listen()
            print("forwarding", flush=True)
            while True:
                client, _ = listener.accept()
                upstream = socket.create_connection((target, 53317))
                threading.Thread(target=pump, args=(client, upstream, True), daemon=True).start()
                threading.Thread(target=pump, args=(upstream, client, False), daemon=True).start()
            """

        /// On a terminal, a receiver nobody announced (`localsend` 0.1.2 answers announcements only by a register a send
        /// does not serve) is shown with its fingerprint and the Verify page's Raw text (both fingerprints, sorted); `a`
        /// sends and pins it, so the next send with --trusted-only goes without a question.
        @Test func onATerminalAnUnpinnedReceiverIsShownAsItsVerifyPageShowsItAndAPinsIt() async throws {
            try await LocalSendPeerTests.onBed(hosts: 2, peers: [.localsend]) { bed, files in
                try await Self.withConfig { config in
                    let receiver = try LocalSendApp(.receive, alias: "pyapp", on: bed.hosts[1])
                    let photo = try TestFiles(in: files).random("photo.bin", size: 40_000, seed: 41)
                    let theirs = try bed.run(
                        host: bed.hosts[0],
                        [
                            "sh", "-c",
                            "openssl s_client -connect \(bed.hosts[1].address):53317 </dev/null 2>/dev/null"
                                + " | openssl x509 -outform DER | sha256sum",
                        ]
                    ).requireSuccess().stdout.prefix(64).uppercased()
                    let ours = try LocalSendReceiveTests.ferryFingerprint(config: config)
                    let target = "\(bed.hosts[1].address):53317"
                    let pane = try TerminalPane(
                        [
                            "send", photo.path, "--to", target, "--session", "ls-pane", "--name", "ferry-out", "--port",
                            "0",
                        ],
                        environment: ["XDG_CONFIG_HOME": config.path], name: "lsverify",
                        namespace: bed.hosts[0].namespace)
                    defer { pane.close() }
                    let screen = try pane.waitFor("Does it? [y]es, [n]o, [a]lways")
                    let sorted = [ours.uppercased(), String(theirs)].sorted()
                    #expect(screen.contains("To LocalSend device at \(target); LocalSend has no"), "\(screen)")
                    #expect(screen.contains("  fingerprint \(theirs)"), "\(screen)")
                    #expect(screen.contains("    \(sorted[0])\n    \(sorted[1])"), "\(screen)")
                    try pane.type("a")
                    let (status, end) = try pane.waitForExit()
                    #expect(status == 0, "\(end)")
                    #expect(
                        try Data(contentsOf: receiver.downloadDirectory.appendingPathComponent("photo.bin"))
                            == Data(contentsOf: photo))
                    let again = try Self.send(
                        bed, from: bed.hosts[0], [photo.path, "--to", target, "--trusted-only"], config: config)
                    #expect(again.status == 0, "\(again.output)")
                    // Pinned as what it is: a LocalSend device, as receive's `a` pins one.
                    let list = try FerryProcess.ferry(
                        ["trust", "list", "--json"], environment: ["XDG_CONFIG_HOME": config.path])
                    #expect(try list.waitForExit() == 0, "\(list.capturedOutput())")
                    let entries = list.allStdoutLines.map(LocalSendReceiveTests.json).filter { !$0.isEmpty }
                    #expect(entries.first?["kind"] as? String == "localsend", "\(entries)")
                    #expect(entries.first?["fingerprint"] as? String == String(theirs), "\(entries)")
                    // Nobody announced it: no alias to keep (its address is no name).
                    #expect(entries.first?["alias"] as? String == "", "\(entries)")
                }
            }
        }

        /// On a terminal the PIN is asked without echo when localsendd wants one, and asked again after a wrong one.
        @Test func onATerminalThePinIsAskedWithoutEchoAndAgainAfterAWrongOne() async throws {
            try await LocalSendPeerTests.onBed(hosts: 2, peers: [.localsendd]) { bed, files in
                try await Self.withConfig { config in
                    let receiver = try LocalSendDaemon(alias: "locked", on: bed.hosts[1], pin: "4321")
                    let photo = try TestFiles(in: files).random("photo.bin", size: 40_000, seed: 43)
                    let pane = try TerminalPane(
                        [
                            "send", photo.path, "--to", "locked", "--session", "ls-pin", "--name", "ferry-out",
                            "--port",
                            "0",
                        ],
                        environment: ["XDG_CONFIG_HOME": config.path], name: "lspin", namespace: bed.hosts[0].namespace)
                    defer { pane.close() }
                    _ = try pane.waitFor("Does it? [y]es, [n]o, [a]lways")
                    try pane.type("y")
                    _ = try pane.waitFor("locked (LocalSend) asks for a PIN:")
                    try pane.type("1111")
                    _ = try pane.waitFor("locked (LocalSend) refused the PIN; PIN again:")
                    try pane.type("4321")
                    let (status, end) = try pane.waitForExit()
                    #expect(status == 0, "\(end)")
                    #expect(!end.contains("1111") && !end.contains("4321"), "\(end)")
                    #expect(
                        try Data(contentsOf: receiver.downloadDirectory.appendingPathComponent("photo.bin"))
                            == Data(contentsOf: photo))
                }
            }
        }

        /// Two receivers asking for a PIN at once: one prompt at a time, each naming its receiver, so each PIN typed
        /// goes to the receiver whose prompt it answers; both files arrive and no PIN is echoed.
        @Test func twoReceiversAskingForAPinAtOnceArePromptedOneAtATime() async throws {
            try await LocalSendPeerTests.onBed(hosts: 3, peers: [.localsendd]) { bed, files in
                try await Self.withConfig { config in
                    let one = try LocalSendDaemon(alias: "one", on: bed.hosts[1], pin: "1357")
                    let two = try LocalSendDaemon(alias: "two", on: bed.hosts[2], pin: "2468")
                    let pins = ["one": "1357", "two": "2468"]
                    let photo = try TestFiles(in: files).random("photo.bin", size: 40_000, seed: 47)
                    let pane = try TerminalPane(
                        [
                            "send", photo.path, "--to", "one", "--to", "two", "--session", "ls-pins", "--name",
                            "ferry-out", "--port", "0",
                        ],
                        environment: ["XDG_CONFIG_HOME": config.path], name: "lspins", namespace: bed.hosts[0].namespace
                    )
                    defer { pane.close() }
                    _ = try pane.waitFor("Does it? [y]es, [n]o, [a]lways")
                    try pane.type("y")
                    // The second receiver's question comes once the first is answered.
                    _ = try pane.waitUntilCount("Does it? [y]es, [n]o, [a]lways", 2)
                    try pane.type("y")
                    // The first PIN prompt names its receiver; the last one on the screen is the one reading the line.
                    let first = try pane.waitFor("(LocalSend) asks for a PIN:")
                    let asking = Self.lastPinPrompt(first)
                    try #require(asking != nil, "\(first)")
                    try pane.type(pins[asking!]!)
                    let other = asking == "one" ? "two" : "one"
                    _ = try pane.waitFor("\(other) (LocalSend) asks for a PIN:")
                    try pane.type(pins[other]!)
                    let (status, end) = try pane.waitForExit()
                    #expect(status == 0, "\(end)")
                    #expect(!end.contains("1357") && !end.contains("2468"), "\(end)")
                    for receiver in [one, two] {
                        #expect(
                            try Data(contentsOf: receiver.downloadDirectory.appendingPathComponent("photo.bin"))
                                == Data(contentsOf: photo), "\(end)")
                    }
                }
            }
        }

        /// The receiver named by the last "NAME (LocalSend) asks for a PIN:" on `screen`.
        static func lastPinPrompt(_ screen: String) -> String? {
            let marks = ["one", "two"].compactMap { name in
                screen.range(of: "\(name) (LocalSend) asks for a PIN:", options: .backwards).map {
                    (name, $0.lowerBound)
                }
            }
            return marks.max { $0.1 < $1.1 }?.0
        }

        /// A file changed after ferry hashed it (here while the file before it uploads, held by a forwarder after 1 MiB:
        /// same size, other bytes) is refused as changed during the send before a byte of it goes (its times differ
        /// from those hashed; localsendd would also have refused it with 422), the other arrives, and the exit status
        /// is 1.
        @Test func aFileChangedAfterItWasHashedFailsAloneAsChangedAndTheOtherArrives() async throws {
            try await LocalSendPeerTests.onBed(hosts: 3, peers: [.localsendd]) { bed, files in
                try await Self.withConfig { config in
                    let receiver = try LocalSendDaemon(alias: "phone", on: bed.hosts[1])
                    let forwarder = try Self.holdingForwarder(bed, files, to: receiver, config: config)
                    defer { _ = try? forwarder.terminate() }
                    let big = try TestFiles(in: files).random("big.bin", size: 8 << 20, seed: 47)
                    let small = try TestFiles(in: files).random("small.bin", size: 5000, seed: 53)
                    let process = try bed.startFerry(
                        on: bed.hosts[0],
                        [
                            "send", "--json", big.path, small.path, "--to", "\(bed.hosts[2].address):53317",
                            "--session",
                            "ls-422", "--name", "ferry-out", "--port", "0", "--wait", "20",
                        ],
                        environment: ["XDG_CONFIG_HOME": config.path])
                    defer { _ = try? process.terminate() }
                    _ = try forwarder.waitForLine(timeout: .seconds(120)) { $0.hasPrefix("holding") }
                    // Hashed and offered already; now other bytes of the same size. Then the upload goes on.
                    let handle = try FileHandle(forWritingTo: small)
                    try handle.write(contentsOf: Data(TestFiles.randomBytes(count: 5000, seed: 59)))
                    try handle.close()
                    forwarder.signal(SIGUSR1)
                    let summary = try process.nextJSON(timeout: .seconds(120)) { $0["event"] as? String == "summary" }
                    #expect(try process.waitForExit(timeout: .seconds(60)) == 1, "\(process.capturedOutput())")
                    let peer = (summary["peers"] as? [[String: Any]])?.first ?? [:]
                    #expect(peer["filesSucceeded"] as? Int == 1, "\(summary)")
                    #expect(peer["filesFailed"] as? Int == 1, "\(summary)")
                    #expect((peer["failure"] as? String ?? "").contains("changed during the send"), "\(summary)")
                    #expect(
                        try Data(contentsOf: receiver.downloadDirectory.appendingPathComponent("big.bin"))
                            == Data(contentsOf: big))
                    #expect(
                        !FileManager.default.fileExists(
                            atPath: receiver.downloadDirectory.appendingPathComponent("small.bin").path))
                }
            }
        }

        /// 1500 files: the prepare-upload answer (a UUID token per file, about 70 KB from localsend-cli) is longer than
        /// the HTTPS client's default 64 KiB answer bound; the sender reads it up to the reply's own bound (4 MiB), and
        /// every file arrives.
        @Test func fifteenHundredFilesReachALocalSendCLIReceiverWhoseAnswerIsLongerThan64KiB() async throws {
            try await LocalSendPeerTests.onBed(hosts: 2, peers: [.localsendCLI]) { bed, files in
                try await Self.withConfig { config in
                    let receiver = try LocalSendCLIReceiver(on: bed.hosts[1])
                    var paths: [String] = []
                    for index in 0..<1500 {
                        let url = files.url.appendingPathComponent("f\(index).bin")
                        try Data("file \(index)\n".utf8).write(to: url)
                        paths.append(url.path)
                    }
                    let target = "\(bed.hosts[1].address):53317"
                    let run = try Self.send(bed, from: bed.hosts[0], paths + ["--to", target], config: config)
                    #expect(run.status == 0, "\(run.output)")
                    #expect(run.peer["filesSucceeded"] as? Int == 1500, "\(run.failure)")
                    let arrived = try FileManager.default.contentsOfDirectory(atPath: receiver.outputDirectory.path)
                    #expect(arrived.count == 1500)
                    #expect(
                        try String(
                            contentsOf: receiver.outputDirectory.appendingPathComponent("f1499.bin"), encoding: .utf8)
                            == "file 1499\n")
                }
            }
        }
    }
}
