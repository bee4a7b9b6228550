@testable import FerrySecurity
import FerrySystem
import FerryTestSupport
import FerryWire
import Foundation
import Testing

/// Runs a command to completion on a thread of its own (the test's tasks keep serving meanwhile).
func runOffTheCooperativePool(
    _ executable: String, _ arguments: [String], input: String = "", timeout: Duration = .seconds(60)
) async throws -> CommandResult {
    try await withCheckedThrowingContinuation { (continuation: CheckedContinuation<CommandResult, any Error>) in
        Thread.detachNewThread {
            continuation.resume(
                with: Result { try FerryProcess.run(executable, arguments, input: input, timeout: timeout) })
        }
    }
}

/// A self-signed certificate and key made by the `openssl` command, as a LocalSend app would present them.
struct ClientCertificate {
    let certificate: String
    let key: String

    /// `keyType` as `openssl req -newkey` takes it ("rsa:2048", "ed25519").
    static func make(in directory: TemporaryDirectory, keyType: String = "rsa:2048") throws -> ClientCertificate {
        let name = keyType.replacingOccurrences(of: ":", with: "-")
        let files = ClientCertificate(
            certificate: directory.path + "/\(name).pem", key: directory.path + "/\(name).key")
        _ = try FerryProcess.run(
            "openssl",
            [
                "req", "-x509", "-newkey", keyType, "-nodes", "-keyout", files.key, "-out", files.certificate,
                "-subj", "/CN=LocalSend User", "-days", "10",
            ]
        ).requireSuccess()
        return files
    }

    /// The SHA-256 of the certificate's DER as `openssl x509 -outform DER | sha256sum` prints it, upper case.
    func fingerprint() throws -> String {
        let hashed = try FerryProcess.run(
            "sh", ["-c", "openssl x509 -in '\(certificate)' -outform DER | sha256sum"]
        ).requireSuccess().stdout
        return String(hashed.prefix(64)).uppercased()
    }
}

/// One HTTPS connection served by `HTTPSStream` on loopback: the handshake, one request head read, a fixed answer.
struct OneRequestServer {
    let port: UInt16
    let outcome: Task<(peer: HTTPSStream.Peer, request: String), any Error>

    static let answer = Array("HTTP/1.1 200 OK\r\nContent-Length: 9\r\nConnection: close\r\n\r\nserved-ok".utf8)

    static func start(reactor: Reactor, context: HTTPSContext) throws -> (OneRequestServer, TCPListener) {
        let listener = try reactor.listenTCP(on: .ipv4(.loopback, port: 0))
        let outcome = Task { () async throws -> (peer: HTTPSStream.Peer, request: String) in
            let connection = try await listener.accept()
            let stream = try HTTPSStream(over: connection, context: context)
            defer { stream.close() }
            let peer = try await stream.handshake()
            var request: [UInt8] = []
            while !request.ends(with: Array("\r\n\r\n".utf8)) {
                let bytes = try await stream.read(maxBytes: 4096)
                if bytes.isEmpty { break }
                request += bytes
            }
            try await stream.write(answer)
            await stream.finishWriting()
            return (peer: peer, request: String(decoding: request, as: UTF8.self))
        }
        return (OneRequestServer(port: listener.localAddress.port, outcome: outcome), listener)
    }
}

extension Array where Element == UInt8 {
    fileprivate func ends(with suffix: [UInt8]) -> Bool {
        count >= suffix.count && Array(self[(count - suffix.count)...]) == suffix
    }
}

/// LocalSend's HTTPS server side against real TLS stacks: `openssl s_client` and Python's `ssl` module.
@Suite("HTTPS server", .timeLimit(.minutes(3)))
struct HTTPSServerTests {
    static let request = "GET /api/localsend/v2/info HTTP/1.1\r\nHost: ferry\r\n\r\n"

    @Test(arguments: ["-tls1_2", "-tls1_3"])
    func anOpenSSLClientWithACertificateIsServedAndKnownByItsHash(version: String) async throws {
        try await TemporaryDirectory.with(prefix: "ferry-https") { directory in
            let client = try ClientCertificate.make(in: directory)
            let reactor = try Reactor()
            defer { reactor.shutdown() }
            let context = try HTTPSContext(identity: try LocalSendIdentity.generate())
            let (server, listener) = try OneRequestServer.start(reactor: reactor, context: context)
            defer { listener.close() }
            let result = try await runOffTheCooperativePool(
                "openssl",
                [
                    "s_client", "-connect", "127.0.0.1:\(server.port)", version, "-cert", client.certificate, "-key",
                    client.key, "-alpn", "h2,http/1.1", "-quiet", "-ign_eof",
                ], input: Self.request)
            let (peer, request) = try await server.outcome.value
            #expect(result.stdout.contains("served-ok"), "\(result.stdout) \(result.stderr)")
            #expect(request.hasPrefix("GET /api/localsend/v2/info"))
            #expect(peer.fingerprint?.description == (try client.fingerprint()))
            #expect(peer.protocolVersion == (version == "-tls1_2" ? "TLSv1.2" : "TLSv1.3"))
            #expect(peer.alpn == "http/1.1")
        }
    }

    @Test func anOpenSSLClientWithoutACertificateIsServedWithNoIdentityUnlessOneIsRequired() async throws {
        let reactor = try Reactor()
        defer { reactor.shutdown() }
        let identity = try LocalSendIdentity.generate()
        let (served, listener) = try OneRequestServer.start(
            reactor: reactor, context: try HTTPSContext(identity: identity))
        defer { listener.close() }
        let result = try await runOffTheCooperativePool(
            "openssl", ["s_client", "-connect", "127.0.0.1:\(served.port)", "-quiet", "-ign_eof"], input: Self.request)
        let (peer, _) = try await served.outcome.value
        #expect(result.stdout.contains("served-ok"), "\(result.stdout) \(result.stderr)")
        #expect(peer.certificateDER == nil)
        #expect(peer.fingerprint == nil)
        #expect(peer.alpn == "")

        let strict = try HTTPSContext(identity: identity, clientCertificate: .require)
        let (refused, strictListener) = try OneRequestServer.start(reactor: reactor, context: strict)
        defer { strictListener.close() }
        let attempt = try await runOffTheCooperativePool(
            "openssl", ["s_client", "-connect", "127.0.0.1:\(refused.port)", "-quiet", "-ign_eof"], input: Self.request)
        #expect(!attempt.stdout.contains("served-ok"))
        await #expect(throws: SecurityError.self) { try await refused.outcome.value }
    }

    /// Python's `ssl` (the stack of `localsendd` and `localsend-cli`) as a LocalSend 1.18 app connects: its own
    /// certificate, ALPN "h2" then "http/1.1"; it sees our certificate, whose hash is our fingerprint.
    @Test(arguments: ["TLSv1_2", "TLSv1_3"])
    func pythonsSSLModuleSeesOurFingerprintAndWeSeeItsCertificate(version: String) async throws {
        try await TemporaryDirectory.with(prefix: "ferry-https") { directory in
            let client = try ClientCertificate.make(in: directory, keyType: "ed25519")
            let reactor = try Reactor()
            defer { reactor.shutdown() }
            let identity = try LocalSendIdentity.generate()
            let (server, listener) = try OneRequestServer.start(
                reactor: reactor, context: try HTTPSContext(identity: identity))
            defer { listener.close() }
            let script = """
                import hashlib, socket, ssl, sys
                context = ssl.SSLContext(ssl.PROTOCOL_TLS_CLIENT)
                context.check_hostname = False
                context.verify_mode = ssl.CERT_NONE
                context.minimum_version = context.maximum_version = ssl.TLSVersion.\(version)
                context.load_cert_chain(certfile=sys.argv[2], keyfile=sys.argv[3])
                context.set_alpn_protocols(["h2", "http/1.1"])
                with socket.create_connection(("127.0.0.1", int(sys.argv[1]))) as raw:
                    with context.wrap_socket(raw) as tls:
                        tls.sendall(b"GET / HTTP/1.1\\r\\nHost: ferry\\r\\n\\r\\n")
                        answer = b""
                        while True:
                            data = tls.recv(4096)
                            if not data:
                                break
                            answer += data
                        print(hashlib.sha256(tls.getpeercert(binary_form=True)).hexdigest())
                        print(tls.version(), tls.selected_alpn_protocol())
                        print(answer.decode())
                """
            let result = try await runOffTheCooperativePool(
                "python3", ["-c", script, "\(server.port)", client.certificate, client.key])
            let (peer, _) = try await server.outcome.value
            let lines = result.stdout.split(separator: "\n").map(String.init)
            #expect(lines.first?.uppercased() == identity.fingerprint.description, "\(result.stdout) \(result.stderr)")
            #expect(lines.dropFirst().first == "\(version.replacingOccurrences(of: "_", with: ".")) http/1.1")
            #expect(result.stdout.contains("served-ok"))
            #expect(peer.fingerprint?.description == (try client.fingerprint()))
        }
    }

    /// An upload's worth of bytes through TLSEngine with TLS 1.2 (new for it: links are TLS 1.3 only) and 1.3,
    /// read whole and in order, and an answer back.
    @Test(arguments: ["TLSv1_2", "TLSv1_3"])
    func manyMegabytesFromPythonArriveWholeAndInOrder(version: String) async throws {
        let reactor = try Reactor()
        defer { reactor.shutdown() }
        let listener = try reactor.listenTCP(on: .ipv4(.loopback, port: 0))
        defer { listener.close() }
        let context = try HTTPSContext(identity: try LocalSendIdentity.generate())
        let size = 24 << 20
        let server = Task { () async throws -> [UInt8] in
            let stream = try HTTPSStream(over: try await listener.accept(), context: context)
            defer { stream.close() }
            let hasher = SHA256Hasher()
            var total = 0
            while total < size {
                let bytes = try await stream.read(maxBytes: 1 << 20)
                if bytes.isEmpty { break }
                hasher.update(bytes)
                total += bytes.count
            }
            try await stream.write(Array("\(total)\n".utf8))
            await stream.finishWriting()
            return hasher.finalize()
        }
        let script = """
            import hashlib, socket, ssl, sys
            context = ssl.SSLContext(ssl.PROTOCOL_TLS_CLIENT)
            context.check_hostname = False
            context.verify_mode = ssl.CERT_NONE
            context.minimum_version = context.maximum_version = ssl.TLSVersion.\(version)
            state, digest, left = 1, hashlib.sha256(), \(size)
            with socket.create_connection(("127.0.0.1", int(sys.argv[1]))) as raw:
                with context.wrap_socket(raw) as tls:
                    while left:
                        block = (hashlib.sha256(state.to_bytes(8, "big")).digest() * 2048)[:left]
                        state += 1
                        tls.sendall(block)
                        digest.update(block)
                        left -= len(block)
                    print(digest.hexdigest())
                    print(tls.recv(100).decode().strip())
            """
        let result = try await runOffTheCooperativePool("python3", ["-c", script, "\(listener.localAddress.port)"])
        let digest = try await server.value
        let lines = result.stdout.split(separator: "\n").map(String.init)
        #expect(lines.first == Hex.string(digest), "\(result.stderr)")
        #expect(lines.dropFirst().first == "\(size)")
    }

    /// Why LocalSend peers get an RSA certificate: a client that offers BoringSSL's default signature algorithms
    /// (Dart's `HttpClient`, the apps up to 1.15) cannot complete a handshake with ferry's Ed25519 certificate, and
    /// does with ours.
    @Test func aClientWithBoringSSLsDefaultSignatureAlgorithmsCannotVerifyAnEd25519Server() async throws {
        try await TemporaryDirectory.with(prefix: "ferry-https") { directory in
            let boringSSLDefaults =
                "ECDSA+SHA256:rsa_pss_rsae_sha256:RSA+SHA256:ECDSA+SHA384:rsa_pss_rsae_sha384:RSA+SHA384"
                + ":rsa_pss_rsae_sha512:RSA+SHA512:RSA+SHA1"
            let ferryIdentity = directory.path + "/identity.pem"
            try Data(try DeviceIdentity.generate().pem()).write(to: URL(fileURLWithPath: ferryIdentity))
            let ed25519Server = try FerryProcess(
                executable: "openssl",
                arguments: ["s_server", "-accept", "127.0.0.1:0", "-cert", ferryIdentity, "-naccept", "1", "-www"])
            defer { ed25519Server.kill() }
            let accepting = try ed25519Server.waitForLine { $0.hasPrefix("ACCEPT") }
            let port = String(accepting.split(separator: ":").last ?? "")
            let refused = try await runOffTheCooperativePool(
                "openssl", ["s_client", "-connect", "127.0.0.1:\(port)", "-sigalgs", boringSSLDefaults, "-brief"],
                input: "GET / HTTP/1.0\r\n\r\n")
            #expect(refused.status != 0)
            #expect(
                refused.stderr.contains("no suitable signature algorithm") || refused.stderr.contains("alert"),
                "\(refused.stderr)")

            let reactor = try Reactor()
            defer { reactor.shutdown() }
            let (server, listener) = try OneRequestServer.start(
                reactor: reactor, context: try HTTPSContext(identity: try LocalSendIdentity.generate()))
            defer { listener.close() }
            let served = try await runOffTheCooperativePool(
                "openssl",
                [
                    "s_client", "-connect", "127.0.0.1:\(server.port)", "-sigalgs", boringSSLDefaults, "-quiet",
                    "-ign_eof",
                ],
                input: Self.request)
            #expect(served.stdout.contains("served-ok"), "\(served.stderr)")
            _ = try await server.outcome.value
        }
    }
}
