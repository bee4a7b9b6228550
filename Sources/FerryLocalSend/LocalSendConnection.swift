import FerrySecurity
import FerryStateMachines
import FerryWire

/// One HTTPS connection of a `LocalSendServer`: the TLS handshake, then requests one after another (keep-alive),
/// each routed by its path. JSON bodies are collected up to their route's bound (413 above it, from the head when
/// its length is declared); an upload's body goes piece by piece into the engine.
struct LocalSendConnection {
    /// The routes; everything else is 404.
    enum Route: Equatable {
        case info
        case register
        case prepareUpload
        case upload
        case cancel

        init?(path: String) {
            switch path {
            case "/api/localsend/v2/info", "/api/localsend/v1/info": self = .info
            case "/api/localsend/v2/register", "/api/localsend/v1/register": self = .register
            case "/api/localsend/v2/prepare-upload": self = .prepareUpload
            case "/api/localsend/v2/upload": self = .upload
            case "/api/localsend/v2/cancel": self = .cancel
            default: return nil
            }
        }

        /// The largest JSON body the route takes (413 above it).
        var maxBodyBytes: Int {
            switch self {
            case .prepareUpload: LocalSendLimits.maxPrepareUploadBytes
            case .info, .register, .cancel, .upload: LocalSendLimits.maxDeviceBodyBytes
            }
        }
    }

    /// Where the current request is.
    private enum Request {
        /// Between requests.
        case none
        /// Collecting a JSON body.
        case json(Route, HTTPRequestHead, HTTPTarget, [UInt8])
        /// Streaming an upload's body into the engine.
        case upload(LocalSendSessions.Upload, received: UInt64, keepAlive: Bool)
        /// Reading and dropping a small body, then answering.
        case discard(LocalSendSessions.Answer, keepAlive: Bool, left: Int)
    }

    /// Why the connection ends.
    private struct Close: Error {}

    let server: LocalSendServer
    let stream: HTTPSStream
    let watchdog: Watchdog
    private var decoder = HTTPRequestDecoder()
    private var request = Request.none
    private var peer = LocalSendPeer(address: "")
    private var waitingForHead = true
    /// An answer that ends the connection was sent while the peer may still be sending: read and drop what comes
    /// for a moment, so that the close does not reset the connection before the peer read the answer.
    private var lingering = false

    init(server: LocalSendServer, stream: HTTPSStream, watchdog: Watchdog) {
        self.server = server
        self.stream = stream
        self.watchdog = watchdog
    }

    mutating func run(address: String) async {
        do {
            let tls = try await stream.handshake()
            peer = LocalSendPeer(address: address, certificateFingerprint: tls.fingerprint?.description)
        } catch {
            server.configuration.log?(2, "LocalSend: TLS handshake with \(address) failed: \(error)")
            return
        }
        do {
            while true {
                try await drain()
                let bytes = try await stream.read(maxBytes: LocalSendServer.readSize)
                if bytes.isEmpty { break }
                if case .none = request, !waitingForHead {
                    waitingForHead = true
                    watchdog.arm(server.configuration.headerTimeout)
                } else if case .upload = request {
                    watchdog.arm(server.configuration.idleTimeout)
                    await server.sessions.progressed()
                } else if !waitingForHead {
                    watchdog.arm(server.configuration.idleTimeout)
                }
                decoder.append(bytes)
            }
        } catch is Close {
        } catch let error as HTTPError {
            try? await respond(.message(error.status, error.description), keepAlive: false)
        } catch {
            server.configuration.log?(2, "LocalSend: connection from \(address) ended: \(error)")
        }
        if case .upload(let upload, let received, _) = request {
            await server.sessions.failUpload(
                upload, received: received, reason: "the connection ended during the upload")
        }
        if lingering { await linger() }
    }

    /// Reads and drops at most `lingerBytes` for at most `lingerTime` after a closing answer.
    private func linger() async {
        watchdog.arm(Self.lingerTime)
        var dropped = 0
        while dropped < Self.lingerBytes {
            guard let bytes = try? await stream.read(maxBytes: LocalSendServer.readSize), !bytes.isEmpty else { return }
            dropped += bytes.count
        }
    }

    static let lingerTime = Duration.seconds(2)
    static let lingerBytes = 16 * 1024 * 1024

    /// Takes every part the decoder has.
    private mutating func drain() async throws {
        while let part = try decoder.next() {
            switch part {
            case .head(let head):
                waitingForHead = false
                watchdog.arm(server.configuration.idleTimeout)
                try await begin(head)
            case .body(let piece):
                try await body(piece)
            case .end:
                try await end()
            }
        }
    }

    private mutating func begin(_ head: HTTPRequestHead) async throws {
        let target = try HTTPTarget(head.target)
        guard let route = Route(path: target.path) else {
            return try await refuse(.message(.notFound, "no such route"), head)
        }
        let allowed = route == .info ? ["GET", "POST"] : ["POST"]
        guard allowed.contains(head.method) else {
            return try await refuse(
                .message(.methodNotAllowed, "\(route) takes \(allowed.joined(separator: ", "))"), head)
        }
        // Files only from a client with an identity: every official app presents a client certificate
        // (docs/LOCALSEND.md, "Certificates and TLS"); refused from the head, before a session or a byte.
        if route == .prepareUpload || route == .upload, peer.certificateFingerprint == nil {
            return try await refuse(.message(.forbidden, Self.certificateNeeded), head)
        }
        if route == .upload {
            return try await beginUpload(head, target)
        }
        if case .contentLength(let length) = head.framing, length > route.maxBodyBytes {
            let error = HTTPError.bodyTooLarge(length: Int(clamping: length), limit: route.maxBodyBytes)
            try await respond(.message(error.status, error.description), keepAlive: false)
            throw Close()
        }
        if head.expectsContinue { try await stream.write(Self.continueBytes) }
        request = .json(route, head, target, [])
    }

    private mutating func beginUpload(_ head: HTTPRequestHead, _ target: HTTPTarget) async throws {
        let query = try LocalSendQuery(target)
        switch await server.sessions.beginUpload(query, from: peer) {
        case .failure(let answer):
            try await refuse(answer, head)
        case .success(let upload):
            if case .contentLength(let length) = head.framing, length != Int64(clamping: upload.size) {
                await server.sessions.failUpload(
                    upload, received: 0, reason: "a body of \(length) bytes was announced")
                try await respond(
                    .message(.badRequest, "the body is \(length) bytes, the file \(upload.size)"), keepAlive: false)
                throw Close()
            }
            if head.expectsContinue { try await stream.write(Self.continueBytes) }
            request = .upload(upload, received: 0, keepAlive: head.keepAlive)
        }
    }

    /// Answers a request refused from its head: its body (if small and already on its way) is read and dropped,
    /// else the connection closes after the answer.
    private mutating func refuse(_ answer: LocalSendSessions.Answer, _ head: HTTPRequestHead) async throws {
        let smallBody = 1024 * 1024
        switch head.framing {
        case .none, .contentLength(0):
            request = .discard(answer, keepAlive: head.keepAlive, left: 0)
        case .contentLength(let length) where length <= smallBody && !head.expectsContinue:
            request = .discard(answer, keepAlive: head.keepAlive, left: smallBody)
        case .chunked where !head.expectsContinue:
            request = .discard(answer, keepAlive: head.keepAlive, left: smallBody)
        default:
            try await respond(answer, keepAlive: false)
            throw Close()
        }
    }

    private mutating func body(_ piece: [UInt8]) async throws {
        switch request {
        case .none:
            throw Close()
        case .json(let route, let head, let target, var collected):
            guard collected.count + piece.count <= route.maxBodyBytes else {
                let error = HTTPError.bodyTooLarge(length: collected.count + piece.count, limit: route.maxBodyBytes)
                try await respond(.message(error.status, error.description), keepAlive: false)
                throw Close()
            }
            request = .none
            collected += piece
            request = .json(route, head, target, collected)
        case .upload(let upload, let received, let keepAlive):
            do {
                try await upload.foreign.write(piece[...], file: upload.index, of: upload.transferID)
            } catch {
                await server.sessions.failUpload(upload, received: received, reason: "\(error)")
                request = .none
                let status: HTTPStatus = error == .tooLong ? .payloadTooLarge : .internalServerError
                try await respond(.message(status, "not stored: \(error)"), keepAlive: false)
                throw Close()
            }
            request = .upload(upload, received: received + UInt64(piece.count), keepAlive: keepAlive)
        case .discard(let answer, let keepAlive, let left):
            guard piece.count <= left else {
                try await respond(answer, keepAlive: false)
                throw Close()
            }
            request = .discard(answer, keepAlive: keepAlive, left: left - piece.count)
        }
    }

    private mutating func end() async throws {
        let current = request
        request = .none
        watchdog.arm(server.configuration.idleTimeout)
        switch current {
        case .none:
            throw Close()
        case .discard(let answer, let keepAlive, _):
            try await respond(answer, keepAlive: keepAlive)
        case .upload(let upload, _, let keepAlive):
            let answer = await server.sessions.finishUpload(upload)
            try await respond(answer, keepAlive: keepAlive)
        case .json(let route, let head, let target, let body):
            let answer = try await answer(route, head: head, target: target, body: body)
            try await respond(answer, keepAlive: head.keepAlive)
        }
    }

    private func answer(_ route: Route, head: HTTPRequestHead, target: HTTPTarget, body: [UInt8]) async throws
        -> LocalSendSessions.Answer
    {
        let device = server.configuration.device
        switch route {
        case .info:
            return .json(.ok, device.encoded())
        case .register:
            let registered = try LocalSendDevice(json: body[...])
            guard let onRegister = server.configuration.onRegister else { return .json(.ok, device.encoded()) }
            let registration = LocalSendRegistration(
                device: registered,
                certificateFingerprint: peer.certificateFingerprint.flatMap(LocalSendFingerprint.init(hex:)),
                address: peer.address)
            switch await onRegister(registration) {
            case .success(let ours): return .json(.ok, ours.encoded())
            case .failure(let refusal): return .message(.badRequest, refusal.description)
            }
        case .prepareUpload:
            let query = try LocalSendQuery(target)
            let prepared = try LocalSendPrepareUpload(json: body[...])
            return await server.sessions.prepareUpload(prepared, from: peer, pin: query.pin)
        case .cancel:
            return await server.sessions.cancel(try LocalSendQuery(target), from: peer)
        case .upload:
            return .message(.internalServerError, "an upload is streamed")
        }
    }

    private mutating func respond(_ answer: LocalSendSessions.Answer, keepAlive: Bool) async throws {
        var headers = HTTPHeaders()
        let empty = answer.status == .noContent
        if !answer.body.isEmpty { headers.add(name: "Content-Type", value: "application/json") }
        if !keepAlive { headers.add(name: "Connection", value: "close") }
        let head = HTTPResponseHead(
            status: answer.status, headers: headers,
            framing: empty ? .none : .contentLength(Int64(answer.body.count)))
        try await stream.write(HTTPResponseEncoder.encode(head) + (empty ? [] : answer.body))
        if !keepAlive {
            await stream.finishWriting()
            lingering = true
            throw Close()
        }
    }

    /// Why a client without a certificate may not send files.
    static let certificateNeeded =
        "ferry needs the client certificate every LocalSend app presents; this client presented none, so it has no"
        + " identity to accept files from"

    static let continueBytes = Array("HTTP/1.1 100 Continue\r\n\r\n".utf8)
}
