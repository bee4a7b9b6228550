import FerrySecurity

/// What a LocalSend receiver answered: a status in 200-299 and the body (bounded).
public struct HTTPSResponse: Equatable, Sendable {
    /// The HTTP status, 200-299.
    public var status: Int
    /// The body, at most `HTTPSClient.Limits.maxResponseBytes`.
    public var body: [UInt8]

    /// A response as the client returns it.
    public init(status: Int, body: [UInt8]) {
        self.status = status
        self.body = body
    }
}

/// HTTPS requests to LocalSend receivers (ferry sending to a phone): libcurl over OpenSSL, HTTP/1.1, TLS 1.2 or
/// 1.3, our `LocalSendIdentity` as client certificate, and the receiver's certificate pinned by the fingerprint
/// discovery announced, checked inside the handshake so a wrong certificate gets no request byte.
///
/// Why libcurl's easy interface on a thread of its own, not its multi interface on ferry's reactor: a send talks
/// to one LocalSend receiver per file at a time (a handful of threads at most, even with `--all`), the easy
/// interface is libcurl's simplest and best-tested path, and driving the multi interface from the epoll reactor
/// would mean mirroring libcurl's socket and timer callbacks there for no gain at that scale. Each request has
/// its own handle and connection (no reuse, no TLS session cache), so every request's handshake checks the pin.
/// No proxy from the environment: a LAN peer is always reached directly.
public struct HTTPSClient: Sendable {
    /// Timeouts and bounds.
    public struct Limits: Sendable {
        /// From the start of the request until TLS is up.
        public var connectTimeout: Duration = .seconds(10)
        /// An upload fails when no byte moved (either way) for this long; long enough for a receiver that hashes
        /// a large file before it answers.
        public var stallTimeout: Duration = .seconds(120)
        /// The largest response body read; a longer one fails the request.
        public var maxResponseBytes = 64 << 10

        /// The defaults above.
        public init() {}
    }

    /// The certificate and key we present.
    public let identity: LocalSendIdentity
    /// Timeouts and bounds of every request.
    public let limits: Limits

    /// A client presenting `identity`.
    public init(identity: LocalSendIdentity, limits: Limits = Limits()) {
        self.identity = identity
        self.limits = limits
    }

    /// POSTs `json` (`Content-Type: application/json`) to `url` on the server whose certificate hashes to
    /// `pinned`, and returns its answer; fails when nothing came back within `timeout` (a receiver may wait for
    /// its user's consent before it answers `prepare-upload`: choose accordingly).
    public func postJSON(
        to url: String, pinned: LocalSendFingerprint, json: [UInt8], timeout: Duration = .seconds(60)
    ) async throws(HTTPSClientError) -> HTTPSResponse {
        let request = CurlRequest(
            identity: identity, pin: CertificatePin(expected: pinned), body: .bytes(json),
            maxResponseBytes: limits.maxResponseBytes, progress: nil)
        return try await request.run(
            url: url, contentType: "application/json", connectTimeout: limits.connectTimeout, stallTimeout: nil,
            totalTimeout: timeout)
    }

    /// POSTs `bytes` (`application/octet-stream`, with its `Content-Length`) as an upload body: a short text's
    /// bytes, bounded by the caller. Fails like `upload(to:pinned:descriptor:...)`.
    public func upload(to url: String, pinned: LocalSendFingerprint, bytes: [UInt8]) async throws(HTTPSClientError)
        -> HTTPSResponse
    {
        let request = CurlRequest(
            identity: identity, pin: CertificatePin(expected: pinned), body: .bytes(bytes),
            maxResponseBytes: limits.maxResponseBytes, progress: nil)
        return try await request.run(
            url: url, contentType: "application/octet-stream", connectTimeout: limits.connectTimeout,
            stallTimeout: limits.stallTimeout, totalTimeout: nil)
    }

    /// Why an upload checked against its SHA-256 was cut short (the engine's words for a file changed after it was
    /// prepared).
    public static let changedText = "the file changed during the send (its bytes no longer hash as offered)"

    /// POSTs `length` bytes of the file open at `descriptor`, from `offset`, as the body
    /// (`application/octet-stream`, with its `Content-Length`), read piece by piece as libcurl sends them (never
    /// the whole file in memory); `progress` gets the body bytes sent so far, on libcurl's thread. The descriptor
    /// stays open (the caller's). Fails when the file ends before `length` bytes. With `sha256`, the bytes read are
    /// hashed as they go out and the last piece is withheld when they do not hash to it: the upload is aborted, the
    /// receiver gets a short body (and keeps nothing), and it fails with `.sourceFailed("the file changed during the
    /// send ...")`.
    public func upload(
        to url: String, pinned: LocalSendFingerprint, descriptor: Int32, offset: Int64 = 0, length: Int64,
        sha256: [UInt8]? = nil, progress: @escaping @Sendable (Int64) -> Void = { _ in }
    ) async throws(HTTPSClientError) -> HTTPSResponse {
        let request = CurlRequest(
            identity: identity, pin: CertificatePin(expected: pinned),
            body: .file(descriptor: descriptor, offset: offset, length: length),
            maxResponseBytes: limits.maxResponseBytes, progress: progress, sha256: sha256)
        return try await request.run(
            url: url, contentType: "application/octet-stream", connectTimeout: limits.connectTimeout,
            stallTimeout: limits.stallTimeout, totalTimeout: nil)
    }
}
