@testable import FerryHTTPClient
import FerrySecurity
import FerrySystem
import FerryTestSupport
import FerryWire
import Foundation
import Glibc
import Synchronization
import Testing

/// The client ferry sends to LocalSend receivers with, against a real HTTPS server on loopback
/// (`RecordingHTTPSServer`: Python's `ssl`, which records what reached it).
@Suite("HTTPS client", .timeLimit(.minutes(3)))
struct HTTPSClientTests {
    static let identity = Result { try LocalSendIdentity.generate() }

    func withServer(_ body: (RecordingHTTPSServer, HTTPSClient, TemporaryDirectory) async throws -> Void)
        async throws
    {
        let identity = try Self.identity.get()
        let registry = ProcessRegistry()
        defer { registry.stopAll() }
        try await TemporaryDirectory.with(prefix: "ferry-https-client") { directory in
            let server = try RecordingHTTPSServer.start(in: directory, registry: registry, client: identity)
            try await body(server, HTTPSClient(identity: identity), directory)
        }
    }

    @Test func aJSONPostReachesThePinnedServerWhichSeesOurCertificate() async throws {
        try await withServer { server, client, _ in
            let json = Array(#"{"info":{"alias":"ferry"},"files":{}}"#.utf8)
            let response = try await client.postJSON(
                to: server.url("/api/localsend/v2/prepare-upload"), pinned: server.fingerprint, json: json)
            #expect(response == HTTPSResponse(status: 200, body: Array(#"{"ok":true}"#.utf8)))
            let record = try server.nextRecord()
            #expect(record["handshake"] as? String == "ok")
            #expect(record["method"] as? String == "POST")
            #expect(record["path"] as? String == "/api/localsend/v2/prepare-upload")
            #expect(record["contentType"] as? String == "application/json")
            #expect(record["sha256"] as? String == Hex.string(SHA256Hasher.digest(json)))
            #expect(record["client"] as? String == client.identity.fingerprint.description)
        }
    }

    /// The pin is checked inside the handshake: the server records no request byte, and the error names both
    /// fingerprints.
    @Test func aWrongCertificateFailsTheHandshakeBeforeAnyRequestByte() async throws {
        try await withServer { server, client, _ in
            let announced = try LocalSendIdentity.generate().fingerprint  // what a forged announcement said
            await #expect(throws: HTTPSClientError.wrongCertificate(expected: announced, presented: server.fingerprint))
            {
                _ = try await client.postJSON(
                    to: server.url("/api/localsend/v2/prepare-upload"), pinned: announced,
                    json: Array(#"{"secret":"file names"}"#.utf8))
            }
            let record = try server.nextRecord()
            #expect(record["handshake"] as? String == "failed")
            #expect(record["received"] as? Int == 0)
            #expect(record["path"] == nil)
        }
    }

    /// Over TLS 1.2 the client offers only ECDHE with an AEAD (the server's list): a server whose only suite is
    /// CBC with RSA key exchange (no forward secrecy) fails the handshake, and no request byte reaches it.
    @Test func aTLS12ServerWithOnlyACBCSuiteIsRefused() async throws {
        let identity = try Self.identity.get()
        let registry = ProcessRegistry()
        defer { registry.stopAll() }
        try await TemporaryDirectory.with(prefix: "ferry-https-client") { directory in
            let server = try RecordingHTTPSServer.start(
                in: directory, registry: registry, client: identity, tls12Ciphers: "AES128-SHA")
            await #expect {
                _ = try await HTTPSClient(identity: identity).postJSON(
                    to: server.url("/api/localsend/v2/info"), pinned: server.fingerprint, json: [])
            } throws: { error in
                if case .handshakeFailed = error as? HTTPSClientError { return true }
                return false
            }
            let record = try server.nextRecord()
            #expect(record["handshake"] as? String == "failed")
            #expect(record["path"] == nil)
        }
    }

    @Test func aFileIsUploadedFromItsDescriptorInPiecesWithProgress() async throws {
        try await withServer { server, client, directory in
            let path = directory.path + "/photo.jpg"
            var bytes = [UInt8](repeating: 0, count: 24 << 20)
            var state: UInt64 = 0x9E37_79B9_7F4A_7C15
            for index in bytes.indices {
                state = state &* 6_364_136_223_846_793_005 &+ 1_442_695_040_888_963_407
                bytes[index] = UInt8(truncatingIfNeeded: state >> 56)
            }
            _ = FileManager.default.createFile(atPath: path, contents: Data(bytes))
            let descriptor = open(path, O_RDONLY | O_CLOEXEC)
            #expect(descriptor >= 0)
            defer { close(descriptor) }
            let reports = Mutex<[Int64]>([])
            let response = try await client.upload(
                to: server.url("/api/localsend/v2/upload?sessionId=s&fileId=f&token=t"), pinned: server.fingerprint,
                descriptor: descriptor, length: Int64(bytes.count)
            ) { sent in reports.withLock { $0.append(sent) } }
            #expect(response.status == 200)
            let record = try server.nextRecord()
            #expect(record["length"] as? Int == bytes.count)
            #expect(record["sha256"] as? String == Hex.string(SHA256Hasher.digest(bytes)))
            #expect(record["contentType"] as? String == "application/octet-stream")
            let seen = reports.withLock { $0 }
            #expect(seen.last == Int64(bytes.count))
            #expect(seen == seen.sorted())
            #expect(seen.count > 1)
        }
    }

    /// The file goes through libcurl's upload buffer one piece at a time: no read is larger than that buffer, so a
    /// 1 GiB file never sits in memory whole.
    @Test func anUploadReadsTheFileInPiecesNoLargerThanLibcurlsBuffer() async throws {
        try await withServer { server, client, directory in
            let path = directory.path + "/video.mp4"
            let size = 8 * CurlRequest.uploadBufferBytes + 12345
            _ = FileManager.default.createFile(atPath: path, contents: Data(repeating: 0x5A, count: size))
            let descriptor = open(path, O_RDONLY | O_CLOEXEC)
            defer { close(descriptor) }
            let request = CurlRequest(
                identity: client.identity, pin: CertificatePin(expected: server.fingerprint),
                body: .file(descriptor: descriptor, offset: 0, length: Int64(size)), maxResponseBytes: 1024,
                progress: nil)
            let response = try await request.run(
                url: server.url("/upload"), contentType: "application/octet-stream", connectTimeout: .seconds(10),
                stallTimeout: .seconds(60), totalTimeout: nil)
            #expect(response.status == 200)
            #expect(try server.nextRecord()["length"] as? Int == size)
            #expect(request.largestPiece > 0)
            #expect(request.largestPiece <= CurlRequest.uploadBufferBytes)
        }
    }

    /// A file whose bytes no longer hash as offered (changed after it was hashed) is cut short before its last
    /// piece: the receiver gets fewer bytes than announced (so keeps nothing) and the upload fails as changed.
    @Test func aFileWhoseBytesDoNotHashAsOfferedIsCutShortBeforeItsLastPiece() async throws {
        try await withServer { server, client, directory in
            let path = directory.path + "/changed"
            let size = 3 << 20
            _ = FileManager.default.createFile(atPath: path, contents: Data(repeating: 9, count: size))
            let descriptor = open(path, O_RDONLY | O_CLOEXEC)
            defer { close(descriptor) }
            let offered = SHA256Hasher.digest([UInt8](repeating: 8, count: size))
            await #expect(throws: HTTPSClientError.sourceFailed(HTTPSClient.changedText)) {
                _ = try await client.upload(
                    to: server.url("/upload"), pinned: server.fingerprint, descriptor: descriptor,
                    length: Int64(size), sha256: offered)
            }
            let record = try server.nextRecord()
            #expect((record["length"] as? Int ?? size) < size, "\(record)")
        }
    }

    @Test func aFileShorterThanAnnouncedFailsAndSaysSo() async throws {
        try await withServer { server, client, directory in
            let path = directory.path + "/short"
            _ = FileManager.default.createFile(atPath: path, contents: Data(repeating: 7, count: 1000))
            let descriptor = open(path, O_RDONLY | O_CLOEXEC)
            defer { close(descriptor) }
            await #expect(throws: HTTPSClientError.sourceFailed("the file ended after 1000 of 5000 bytes")) {
                _ = try await client.upload(
                    to: server.url("/upload"), pinned: server.fingerprint, descriptor: descriptor, length: 5000)
            }
        }
    }

    @Test func anErrorStatusAndAnOversizedAnswerAreReportedAsSuch() async throws {
        try await withServer { server, client, _ in
            await #expect(throws: HTTPSClientError.status(409, body: "refused by the test server")) {
                _ = try await client.postJSON(to: server.url("/status/409"), pinned: server.fingerprint, json: [])
            }
            await #expect(throws: HTTPSClientError.responseTooLarge(limit: 64 << 10)) {
                _ = try await client.postJSON(to: server.url("/large"), pinned: server.fingerprint, json: [])
            }
        }
    }

    /// A redirect is an answer like any other status, never followed: following one would send the request (and a
    /// file) to a place whose certificate nobody announced. The server sees the redirected request and then the next
    /// one, never a request to where it pointed.
    @Test func aRedirectIsNeverFollowed() async throws {
        try await withServer { server, client, _ in
            let json = Array(#"{"info":{"alias":"ferry"},"files":{}}"#.utf8)
            await #expect(throws: HTTPSClientError.status(307, body: "moved")) {
                _ = try await client.postJSON(
                    to: server.url("/redirect/landed"), pinned: server.fingerprint, json: json)
            }
            #expect(try server.nextRecord()["path"] as? String == "/redirect/landed")
            _ = try await client.postJSON(to: server.url("/after"), pinned: server.fingerprint, json: [])
            #expect(try server.nextRecord()["path"] as? String == "/after")
        }
    }

    @Test func aRequestCancelledFromAnotherTaskStopsAndSaysCancelled() async throws {
        try await withServer { server, client, _ in
            let request = Task {
                try await client.postJSON(
                    to: server.url("/hang"), pinned: server.fingerprint, json: [], timeout: .seconds(120))
            }
            // The server has the request.
            let waiting = try await Task.detached { try server.nextRecord()["waiting"] as? Bool }.value
            #expect(waiting == true)
            request.cancel()
            await #expect(throws: HTTPSClientError.cancelled) { _ = try await request.value }
        }
    }

    @Test func aServerThatNeverAnswersTimesOut() async throws {
        try await withServer { server, client, _ in
            await #expect {
                _ = try await client.postJSON(
                    to: server.url("/hang"), pinned: server.fingerprint, json: [], timeout: .milliseconds(1500))
            } throws: { error in
                if case .timedOut = error as? HTTPSClientError { return true }
                return false
            }
        }
    }

    @Test func aPortWhereNobodyListensIsRefused() async throws {
        let reactor = try Reactor()
        defer { reactor.shutdown() }
        let listener = try reactor.listenTCP(on: .ipv4(.loopback, port: 0))
        let port = listener.localAddress.port
        listener.close()  // the port is free now: nobody accepts there
        let client = HTTPSClient(identity: try Self.identity.get())
        await #expect {
            _ = try await client.postJSON(
                to: "https://127.0.0.1:\(port)/api/localsend/v2/info", pinned: try Self.identity.get().fingerprint,
                json: [])
        } throws: { error in
            if case .refused = error as? HTTPSClientError { return true }
            return false
        }
    }
}
