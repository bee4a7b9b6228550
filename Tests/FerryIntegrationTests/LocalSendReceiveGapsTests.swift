import FerrySecurity
import FerryTestSupport
import Foundation
import Testing

extension IntegrationTests {
    /// What the official LocalSend apps do that the PyPI peers do not, sent by hand over HTTPS with a client certificate
    /// (as every app presents one): an upload whose connection breaks mid-body, and a text message (a session of one
    /// `text/plain` file whose `preview` is the text). No PyPI peer can send either with a certificate: localsendd sends
    /// no text, localsend-cli and localsend 0.1.2 present no client certificate (docs/LOCALSEND.md, "Test peers").
    @Suite("LocalSend receive gaps", .serialized)
    struct LocalSendReceiveGapsTests {
        typealias Receive = LocalSendReceiveTests

        /// Python on `host`: a TLS connection with `certificate` to `address`:53317 that sends `head` and `bodyBytes`
        /// bytes of a body, then closes (what a phone that leaves the network mid-upload does to the server).
        static func brokenUpload(
            _ bed: TestBed, from host: TestHost, to address: String, path: String, declared: Int, bodyBytes: Int,
            certificate: Receive.ClientCertificate
        ) throws {
            let script = """
                import socket, ssl, sys
                context = ssl.SSLContext(ssl.PROTOCOL_TLS_CLIENT)
                context.check_hostname = False
                context.verify_mode = ssl.CERT_NONE
                context.load_cert_chain(sys.argv[1], sys.argv[2])
                raw = socket.create_connection((sys.argv[3], 53317), timeout=30)
                tls = context.wrap_socket(raw)
                head = "POST %s HTTP/1.1\\r\\nHost: ferry\\r\\nContent-Length: %s\\r\\n\\r\\n" % (sys.argv[4], sys.argv[5])
                tls.sendall(head.encode() + b"x" * int(sys.argv[6]))
                tls.close()
                """
            _ = try bed.run(
                host: host,
                [
                    "python3", "-c", script, certificate.certificate, certificate.key, address, path, "\(declared)",
                    "\(bodyBytes)",
                ]
            ).requireSuccess()
        }

        /// LocalSend has no resume, but an upload that breaks is one file: the apps' own receiver fails that file and
        /// goes on with the session's others (`receive_controller.dart`: the file `failed`, the session ends when every
        /// file is finished, skipped or failed). Its token is spent when its upload began (the apps remove it then), so
        /// a retry with the same token is refused 409 as the apps' receiver refuses it (403 there).
        @Test func anUploadBrokenMidBodyFailsThatFileAloneAndTheSessionGoesOn() async throws {
            try await LocalSendPeerTests.onBed(hosts: 2, peers: []) { bed, files in
                let receiver = try Receiver(on: bed.hosts[1], bed: bed)
                defer { receiver.stop() }
                let alice = try Receive.ClientCertificate.make(in: files, name: "alice")
                let (client, address) = (bed.hosts[0], bed.hosts[1].address)
                let kept = try TestFiles(in: files).random("kept.bin", size: 200_000, seed: 61)
                let body = Receive.prepareBody(
                    alias: "alice",
                    files: [
                        ("broken", "broken.bin", 300_000, nil),
                        ("kept", "kept.bin", 200_000, try TransferHarness.sha256(kept.path)),
                    ])
                let prepared = try Receive.curl(
                    bed, from: client, to: address, "/api/localsend/v2/prepare-upload", body: body, certificate: alice)
                #expect(prepared.status == 200, "\(prepared)")
                let reply = Receive.json(prepared.body)
                let session = reply["sessionId"] as? String ?? ""
                let tokens = reply["files"] as? [String: String] ?? [:]
                func upload(_ id: String) -> String {
                    "/api/localsend/v2/upload?sessionId=\(session)&fileId=\(id)&token=\(tokens[id] ?? "")"
                }
                try Self.brokenUpload(
                    bed, from: client, to: address, path: upload("broken"), declared: 300_000, bodyBytes: 100_000,
                    certificate: alice)
                let failed = try receiver.process.nextJSON(timeout: .seconds(60)) { $0["event"] as? String == "file" }
                #expect(failed["name"] as? String == "broken.bin" && failed["ok"] as? Bool == false, "\(failed)")
                let why = failed["failure"] as? String ?? ""
                #expect(why.contains("100000 of 300000"), "\(why)")
                // The session's other file goes on, and is published verified.
                let second = try Receive.curl(
                    bed, from: client, to: address, upload("kept"), bodyFile: kept.path, certificate: alice)
                #expect(second.status == 200, "\(second) \(receiver.process.capturedOutput())")
                #expect(try receiver.published() == ["kept.bin": 200_000])
                let retry = try Receive.curl(
                    bed, from: client, to: address, upload("broken"), bodyFile: kept.path, certificate: alice)
                #expect(retry.status == 409 || retry.status == 403, "\(retry)")
                #expect(try receiver.published() == ["kept.bin": 200_000])
                let staged =
                    (try? FileManager.default.contentsOfDirectory(atPath: receiver.inbox.path + "/.ferry-staging"))
                    ?? []
                #expect(staged.isEmpty, "\(staged)")
            }
        }

        /// The apps send a text as a session of one `text/plain` file whose `preview` is the text, expect 204 ("read and
        /// close": no upload follows) and show "sent". ferry shows it as a ferry text message (`message` event), under
        /// the accept policy; with `--into` it is also kept as a file, as a ferry `--text` message is.
        @Test func aTextFromAnAppIsShownAsAMessageAndAnswered204() async throws {
            try await LocalSendPeerTests.onBed(hosts: 2, peers: []) { bed, files in
                let receiver = try Receiver(on: bed.hosts[1], bed: bed)
                defer { receiver.stop() }
                let alice = try Receive.ClientCertificate.make(in: files, name: "alice")
                let (client, address) = (bed.hosts[0], bed.hosts[1].address)
                let text = "Hello from a phone"
                // As the app writes it (send_provider.dart): the text in `preview`, its size, no sha256.
                let body =
                    "{\"info\":{\"alias\":\"alice\",\"version\":\"2.1\",\"deviceType\":\"mobile\"},\"files\":{\"t1\":"
                    + "{\"id\":\"t1\",\"fileName\":\"note.txt\",\"size\":\(text.utf8.count),\"fileType\":\"text/plain\","
                    + "\"preview\":\"\(text)\"}}}"
                let prepared = try Receive.curl(
                    bed, from: client, to: address, "/api/localsend/v2/prepare-upload", body: body, certificate: alice)
                #expect(prepared.status == 204 && prepared.body.isEmpty, "\(prepared)")
                let message = try receiver.process.nextJSON(timeout: .seconds(60)) {
                    $0["event"] as? String == "message"
                }
                #expect(message["text"] as? String == text, "\(message)")
                // The receiver is free for the next session at once.
                let again = try Receive.curl(
                    bed, from: client, to: address, "/api/localsend/v2/prepare-upload", body: body, certificate: alice)
                #expect(again.status == 204, "\(again)")
            }
        }

        /// The JSON an app sends for a text (`send_provider.dart`): the text in `preview`, its size, no sha256.
        static func textBody(_ text: String, name: String = "note.txt") -> String {
            "{\"info\":{\"alias\":\"alice\",\"version\":\"2.1\",\"deviceType\":\"mobile\"},\"files\":{\"t1\":"
                + "{\"id\":\"t1\",\"fileName\":\"\(name)\",\"size\":\(text.utf8.count),\"fileType\":\"text/plain\","
                + "\"preview\":\"\(text)\"}}}"
        }

        /// The next `message`, `file` or `denied` event: whichever the receiver shows first.
        static func nextShown(_ receiver: Receiver) throws -> [String: Any] {
            try receiver.process.nextJSON(timeout: .seconds(60)) {
                ["message", "file", "denied"].contains($0["event"] as? String ?? "")
            }
        }

        /// A text longer than a ferry message (`Payload.maxMessageBytes`, 64 KiB) but within the JSON's `preview` bound
        /// (1 MiB) is refused 413 before anything is offered: it is neither shown nor kept as a file (a message is shown
        /// whole or not at all), and the app shows an error with the reason rather than "sent".
        @Test func aTextLongerThanAMessageIsRefused413AndNothingIsShownOrKept() async throws {
            try await LocalSendPeerTests.onBed(hosts: 2, peers: []) { bed, files in
                let receiver = try Receiver(on: bed.hosts[1], bed: bed)
                defer { receiver.stop() }
                let alice = try Receive.ClientCertificate.make(in: files, name: "alice")
                let (client, address) = (bed.hosts[0], bed.hosts[1].address)
                let long = String(repeating: "a", count: 65_537)
                let refused = try Receive.curl(
                    bed, from: client, to: address, "/api/localsend/v2/prepare-upload",
                    body: Self.textBody(long, name: "long.txt"), certificate: alice)
                #expect(refused.status == 413, "\(refused) \(receiver.process.capturedOutput())")
                // The next thing shown is the next (short) text: nothing of the long one came before it.
                let short = try Receive.curl(
                    bed, from: client, to: address, "/api/localsend/v2/prepare-upload", body: Self.textBody("short"),
                    certificate: alice)
                #expect(short.status == 204, "\(short)")
                let shown = try Self.nextShown(receiver)
                #expect(shown["event"] as? String == "message" && shown["text"] as? String == "short", "\(shown)")
                #expect(try receiver.published() == ["note.txt": 5])
                let staged =
                    (try? FileManager.default.contentsOfDirectory(atPath: receiver.inbox.path + "/.ferry-staging"))
                    ?? []
                #expect(staged.isEmpty, "\(staged)")
            }
        }

        /// A text the accept policy declines (`--accept trusted`, a sender not pinned) is answered 403 (the app shows
        /// "declined"), not shown, not kept.
        @Test func aDeclinedTextIsAnswered403AndNotShown() async throws {
            try await LocalSendPeerTests.onBed(hosts: 2, peers: []) { bed, files in
                let receiver = try Receiver(on: bed.hosts[1], bed: bed, accept: "trusted")
                defer { receiver.stop() }
                let alice = try Receive.ClientCertificate.make(in: files, name: "alice")
                let (client, address) = (bed.hosts[0], bed.hosts[1].address)
                let declined = try Receive.curl(
                    bed, from: client, to: address, "/api/localsend/v2/prepare-upload",
                    body: Self.textBody("Hello from a stranger"), certificate: alice)
                #expect(declined.status == 403, "\(declined)")
                let shown = try Self.nextShown(receiver)
                #expect(shown["event"] as? String == "denied", "\(shown)")
                #expect(try receiver.published().isEmpty)
                let staged =
                    (try? FileManager.default.contentsOfDirectory(atPath: receiver.inbox.path + "/.ferry-staging"))
                    ?? []
                #expect(staged.isEmpty, "\(staged)")
            }
        }
    }
}

extension IntegrationTests.LocalSendReceiveGapsTests {
    typealias Receiver = IntegrationTests.LocalSendReceiveTests.Receiver
}
