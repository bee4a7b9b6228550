import FerrySecurity
import FerryTestSupport
import Foundation

/// A real HTTPS server (Python's `ssl` over a plain socket, one thread a connection) that records what reached it:
/// one JSON line per connection on stdout, whether its handshake finished, the request's method, path and body
/// (length and SHA-256) and the client certificate's fingerprint, before it answers.
///
/// Paths choose the answer: `/status/NNN` answers NNN, `/large` a 1 MiB body, `/hang` nothing (it holds the
/// connection until the client closes), `/redirect/PATH` 307 to `/PATH`; anything else 200 with `{"ok":true}`.
struct RecordingHTTPSServer {
    let process: FerryProcess
    let port: UInt16
    /// Our test server's certificate hash, as a LocalSend peer would announce it.
    let fingerprint: LocalSendFingerprint

    static let script = #"""
        import hashlib, json, socket, ssl, sys, threading
        certificate, key = sys.argv[1], sys.argv[2]
        context = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
        context.load_cert_chain(certificate, key)
        # The client must present the certificate given here, verified as OpenSSL verifies a self-signed one (its
        # signature and its dates, as LocalSend 1.18 does).
        context.verify_mode = ssl.CERT_REQUIRED
        context.load_verify_locations(sys.argv[3])
        if len(sys.argv) > 4:
            # A TLS 1.2-only server offering only these suites (an old or misconfigured peer).
            context.maximum_version = ssl.TLSVersion.TLSv1_2
            context.set_ciphers(sys.argv[4])
        listener = socket.socket()
        listener.bind(("127.0.0.1", 0))
        listener.listen(16)
        print("PORT", listener.getsockname()[1], flush=True)
        lock = threading.Lock()

        def record(entry):
            with lock:
                print(json.dumps(entry), flush=True)

        def serve(raw):
            entry = {"handshake": "failed", "received": 0}
            try:
                tls = context.wrap_socket(raw, server_side=True)
            except Exception as error:
                entry["error"] = str(error)
                record(entry)
                raw.close()
                return
            entry["handshake"] = "ok"
            entry["version"] = tls.version()
            entry["client"] = hashlib.sha256(tls.getpeercert(binary_form=True)).hexdigest().upper()
            head = b""
            while b"\r\n\r\n" not in head:
                data = tls.recv(65536)
                if not data:
                    break
                head += data
            entry["received"] = len(head)
            head, _, rest = head.partition(b"\r\n\r\n")
            lines = head.decode("latin-1").split("\r\n")
            method, path = (lines[0].split(" ") + ["", ""])[:2]
            headers = {l.split(":", 1)[0].strip().lower(): l.split(":", 1)[1].strip() for l in lines[1:] if ":" in l}
            entry.update(method=method, path=path, contentType=headers.get("content-type", ""))
            if path == "/hang":
                record(dict(entry, waiting=True))
                while tls.recv(65536):
                    pass
                tls.close()
                return
            length = int(headers.get("content-length", "0"))
            digest = hashlib.sha256(rest)
            got = len(rest)
            while got < length:
                data = tls.recv(1 << 20)
                if not data:
                    break
                digest.update(data)
                got += len(data)
            entry.update(length=got, sha256=digest.hexdigest())
            status, body, fields = 200, b'{"ok":true}', b""
            if path.startswith("/status/"):
                status, body = int(path[len("/status/"):]), b"refused by the test server"
            elif path == "/large":
                body = b"x" * (1 << 20)
            elif path.startswith("/redirect/"):
                # 307 keeps the method and body when followed: a client that follows would POST them to the target.
                status, body = 307, b"moved"
                fields = b"Location: %s\r\n" % path[len("/redirect"):].encode()
            record(entry)
            head = b"HTTP/1.1 %d X\r\n%sContent-Length: %d\r\nConnection: close\r\n\r\n" % (status, fields, len(body))
            tls.sendall(head + body)
            tls.close()

        while True:
            connection, _ = listener.accept()
            threading.Thread(target=serve, args=(connection,), daemon=True).start()
        """#

    /// Starts the server with a new RSA certificate made by `openssl req` in `directory`; it accepts only `client`'s
    /// certificate. With `tls12Ciphers` it speaks TLS 1.2 only, with only those suites (an OpenSSL cipher list).
    static func start(
        in directory: TemporaryDirectory, registry: ProcessRegistry, client: LocalSendIdentity,
        tls12Ciphers: String? = nil
    ) throws -> RecordingHTTPSServer {
        let clientCertificate = directory.path + "/client.pem"
        let pem = String(decoding: try client.pem(), as: UTF8.self)
        try ("-----BEGIN CERTIFICATE-----" + pem.components(separatedBy: "-----BEGIN CERTIFICATE-----")[1])
            .write(toFile: clientCertificate, atomically: true, encoding: .utf8)
        let certificate = directory.path + "/server.pem"
        let key = directory.path + "/server.key"
        _ = try FerryProcess.run(
            "openssl",
            [
                "req", "-x509", "-newkey", "rsa:2048", "-nodes", "-keyout", key, "-out", certificate, "-subj",
                "/CN=LocalSend User", "-days", "10",
            ]
        ).requireSuccess()
        let hashed = try FerryProcess.run(
            "sh", ["-c", "openssl x509 -in '\(certificate)' -outform DER | sha256sum"]
        ).requireSuccess().stdout
        guard let fingerprint = LocalSendFingerprint(hex: String(hashed.prefix(64))) else {
            throw TestSupportError.timedOut(waitingFor: "a certificate hash", process: "sha256sum", captured: hashed)
        }
        let process = try registry.start(
            executable: "python3",
            arguments: ["-c", script, certificate, key, clientCertificate] + (tls12Ciphers.map { [$0] } ?? []))
        let line = try process.waitForLine { $0.hasPrefix("PORT ") }
        return RecordingHTTPSServer(
            process: process, port: UInt16(line.dropFirst(5)) ?? 0, fingerprint: fingerprint)
    }

    func url(_ path: String) -> String { "https://127.0.0.1:\(port)\(path)" }

    /// The next connection's record.
    func nextRecord() throws -> [String: Any] {
        let line = try process.waitForLine { $0.hasPrefix("{") }
        return (try JSONSerialization.jsonObject(with: Data(line.utf8)) as? [String: Any]) ?? [:]
    }
}
