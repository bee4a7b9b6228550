import FerrySystem
import FerryWire
import Synchronization

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

    private enum HandshakeState {
        case notStarted
        case running
        case done(Peer)
        case failed(SecurityError)
    }

    private let transport: any ByteStream
    private let engine: Mutex<TLSEngine>
    private let handshakeState = Mutex<(state: HandshakeState, waiters: [CheckedContinuation<Peer, any Error>])>(
        (.notStarted, []))

    /// A TLS server stream over `transport`; the handshake runs on the first read or write (or `handshake()`).
    public init(over transport: any ByteStream, context: HTTPSContext) throws(SecurityError) {
        self.transport = transport
        self.engine = Mutex(try TLSEngine(sslContext: context.context, isClient: false))
    }

    /// The transport's local address.
    public var localAddress: SocketAddress { transport.localAddress }
    /// The transport's remote address.
    public var remoteAddress: SocketAddress { transport.remoteAddress }

    /// The peer; nil until the handshake finished.
    public var peer: Peer? {
        handshakeState.withLock { entry in
            if case .done(let peer) = entry.state { return peer }
            return nil
        }
    }

    /// Runs the handshake (once; later calls wait for the first) and returns the peer.
    @discardableResult
    public func handshake() async throws -> Peer {
        enum Next {
            case run
            case wait
            case settled(Result<Peer, SecurityError>)
        }
        let next = handshakeState.withLock { entry -> Next in
            switch entry.state {
            case .notStarted:
                entry.state = .running
                return .run
            case .running: return .wait
            case .done(let peer): return .settled(.success(peer))
            case .failed(let error): return .settled(.failure(error))
            }
        }
        if case .settled(let result) = next { return try result.get() }
        if case .run = next {
            do {
                let peer = try await runHandshake()
                finishHandshake(.done(peer))
                return peer
            } catch {
                let failure = (error as? SecurityError) ?? .closedDuringHandshake
                finishHandshake(.failed(failure))
                transport.close()
                throw failure
            }
        }
        return try await withCheckedThrowingContinuation { continuation in
            let settled = handshakeState.withLock { entry -> Result<Peer, SecurityError>? in
                switch entry.state {
                case .done(let peer): return .success(peer)
                case .failed(let error): return .failure(error)
                case .notStarted, .running:
                    entry.waiters.append(continuation)
                    return nil
                }
            }
            if let settled { continuation.resume(with: settled) }
        }
    }

    /// Decrypted bytes, at most `maxBytes` (positive); empty at the end of the stream (a close_notify or the
    /// transport's end: HTTP frames its own messages, so a cut shows there as a short body).
    public func read(maxBytes: Int) async throws -> [UInt8] {
        precondition(maxBytes > 0, "read(maxBytes:) needs a positive maxBytes")
        try await handshake()
        while true {
            // Records OpenSSL writes while reading (a KeyUpdate answer) wait for the next write, so that only the
            // writer sends and records never leave out of order; none are due (no tickets, no renegotiation).
            let (bytes, step) = engine.withLock { $0.read(maxBytes: maxBytes) }
            if !bytes.isEmpty { return bytes }
            switch step {
            case .done, .needInput:
                let input = try await transport.read(maxBytes: TLSStream.inputLimit)
                if input.isEmpty { return [] }
                engine.withLock { $0.feed(input) }
            case .closed:
                return []
            case .failed(let reason):
                throw SecurityError.connectionFailed(reason)
            }
        }
    }

    /// Encrypts and sends `bytes`, suspending while the transport is full.
    public func write(_ bytes: [UInt8]) async throws {
        try await handshake()
        var offset = 0
        repeat {
            let end = min(bytes.count, offset + TLSStream.writeSlice)
            let records = try engine.withLock { engine throws(SecurityError) in try engine.write([bytes[offset..<end]])
            }
            if !records.isEmpty { try await transport.write(records) }
            offset = end
        } while offset < bytes.count
    }

    /// Sends a close_notify after the last write, then ends the transport's write side.
    public func finishWriting() async {
        if peer != nil {
            let records = engine.withLock { $0.closeNotify() }
            if !records.isEmpty { try? await transport.write(records) }
        }
        await transport.finishWriting()
    }

    /// Closes the transport at once.
    public func close() {
        transport.close()
        finishHandshake(.failed(.closedDuringHandshake))
    }

    private func runHandshake() async throws -> Peer {
        while true {
            let (step, records) = engine.withLock { engine in
                let step = engine.handshake()
                return (step, engine.drain())
            }
            if !records.isEmpty {
                do {
                    try await transport.write(records)
                } catch {
                    if case .failed(let reason) = step { throw SecurityError.handshakeFailed(reason) }
                    throw error
                }
            }
            switch step {
            case .done:
                return engine.withLock { engine in
                    Peer(
                        certificateDER: engine.peerCertificate(), protocolVersion: engine.protocolVersion(),
                        cipher: engine.cipherName(), alpn: engine.selectedALPN())
                }
            case .needInput:
                let input = try await transport.read(maxBytes: 16 << 10)
                guard !input.isEmpty else { throw SecurityError.closedDuringHandshake }
                engine.withLock { $0.feed(input) }
            case .closed:
                throw SecurityError.closedDuringHandshake
            case .failed(let reason):
                throw SecurityError.handshakeFailed(reason)
            }
        }
    }

    private func finishHandshake(_ outcome: HandshakeState) {
        let waiters = handshakeState.withLock { entry -> [CheckedContinuation<Peer, any Error>] in
            switch entry.state {
            case .done, .failed: return []
            case .notStarted, .running: break
            }
            entry.state = outcome
            defer { entry.waiters = [] }
            return entry.waiters
        }
        for waiter in waiters {
            switch outcome {
            case .done(let peer): waiter.resume(returning: peer)
            case .failed(let error): waiter.resume(throwing: error)
            case .notStarted, .running: break
            }
        }
    }
}
