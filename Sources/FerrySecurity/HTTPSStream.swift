import FerrySystem
import FerryWire

/// The server end of one HTTPS connection from a LocalSend peer: TLS (1.2 or 1.3, `HTTPSContext`) over any
/// `ByteStream`, plaintext HTTP bytes inside.
///
/// The handshake runs on `handshake()` or on the first read or write; afterwards `peer` says who connected: the
/// DER of the client's certificate and its LocalSend fingerprint, or no certificate at all (no identity). TLS has
/// then proved that the client holds the key of the certificate it sent; whether its hash is trusted is the
/// caller's rule. Bounds before that: handshake input is read 16 KiB at a time and OpenSSL refuses a certificate
/// list above `TLSContext.maxCertificateListBytes`; the caller's deadline closes a client that stalls.
///
/// The same `TLSEngine` (memory BIOs) as ferry's links, so the reactor keeps every descriptor. One reader and one
/// writer at a time.
public final class HTTPSStream: ByteStream {
    /// Who the handshake authenticated, and how.
    public struct Peer: Equatable, Sendable {
        /// The client's certificate, DER-encoded; nil when it sent none (then it has no identity).
        public var certificateDER: [UInt8]?
        /// The SHA-256 of `certificateDER`: the client's identity as LocalSend peers know it.
        public var fingerprint: LocalSendFingerprint? {
            certificateDER.map { LocalSendFingerprint(certificateDER: $0) }
        }
        /// "TLSv1.2" or "TLSv1.3".
        public var protocolVersion: String
        /// The negotiated cipher suite.
        public var cipher: String
        /// "http/1.1" when the client asked for it with ALPN, else "".
        public var alpn: String
    }

    private let channel: TLSChannel<Peer>

    /// A TLS server stream over `transport`; the handshake runs on the first read or write (or `handshake()`).
    public init(over transport: any ByteStream, context: HTTPSContext) throws(SecurityError) {
        channel = TLSChannel(over: transport, engine: try TLSEngine(sslContext: context.context, isClient: false))
    }

    /// The transport's local address.
    public var localAddress: SocketAddress { channel.transport.localAddress }
    /// The transport's remote address.
    public var remoteAddress: SocketAddress { channel.transport.remoteAddress }

    /// The peer; nil until the handshake finished.
    public var peer: Peer? { channel.peer }

    /// Runs the handshake (once; later calls wait for the first) and returns the peer.
    @discardableResult
    public func handshake() async throws -> Peer {
        try await channel.handshake {
            try await channel.driveHandshake()
            return channel.engine.withLock { engine in
                Peer(
                    certificateDER: engine.peerCertificate(), protocolVersion: engine.protocolVersion(),
                    cipher: engine.cipherName(), alpn: engine.selectedALPN())
            }
        }
    }

    /// Decrypted bytes, at most `maxBytes` (positive); empty at the end of the stream (a close_notify or the
    /// transport's end: HTTP frames its own messages, so a cut shows there as a short body).
    public func read(maxBytes: Int) async throws -> [UInt8] {
        precondition(maxBytes > 0, "read(maxBytes:) needs a positive maxBytes")
        try await handshake()
        // Records OpenSSL writes while reading (a KeyUpdate answer) wait for the next write, so that only the writer
        // sends and records never leave out of order; none are due (no tickets, no renegotiation).
        return try await channel.read(maxBytes: maxBytes, inputLimit: TLSStream.inputLimit)
    }

    /// Encrypts and sends `bytes`, suspending while the transport is full.
    public func write(_ bytes: [UInt8]) async throws {
        try await handshake()
        var offset = 0
        repeat {
            let end = min(bytes.count, offset + TLSStream.writeSlice)
            try await channel.send([bytes[offset..<end]])
            offset = end
        } while offset < bytes.count
    }

    /// Sends a close_notify after the last write, then ends the transport's write side.
    public func finishWriting() async {
        await channel.finishWriting()
    }

    /// Closes the transport at once.
    public func close() {
        channel.close()
    }
}
