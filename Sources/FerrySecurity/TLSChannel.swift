import FerrySystem
import Synchronization

/// TLS over a `ByteStream` with memory BIOs (`TLSEngine`): the part `TLSStream` (ferry's links) and `HTTPSStream`
/// (LocalSend peers) share. It runs the handshake once, whoever asks first (a read, a write or `handshake`), and
/// lets later callers wait for that one; it drives OpenSSL's handshake, decrypts reads and encrypts writes.
///
/// What is the stream's own stays there: its preface (ferry's), which `Peer` the handshake produced and from which
/// facts of the engine, and its writes' slicing. The reactor keeps every descriptor: nothing here blocks a thread.
///
/// Bounds before authentication: handshake input is read 16 KiB at a time and OpenSSL refuses a certificate list
/// above `TLSContext.maxCertificateListBytes`; the owner's deadline closes a peer that stalls. One reader and one
/// writer at a time.
final class TLSChannel<Peer: Sendable>: Sendable {
    private enum HandshakeState {
        case notStarted
        case running
        case done(Peer)
        case failed(SecurityError)
    }

    /// What a caller of `handshake` does: run it, wait for the one running, or take its outcome.
    private enum Next {
        case run
        case wait
        case settled(Result<Peer, SecurityError>)
    }

    /// Handshake input read from the transport at a time.
    static var handshakeInputLimit: Int { 16 << 10 }

    /// The transport the records travel on.
    let transport: any ByteStream
    /// The OpenSSL connection; one lock for the reader and the writer.
    let engine: Mutex<TLSEngine>
    private let handshakeState = Mutex<(state: HandshakeState, waiters: [CheckedContinuation<Peer, any Error>])>(
        (.notStarted, []))

    init(over transport: any ByteStream, engine: consuming TLSEngine) {
        self.transport = transport
        self.engine = Mutex(engine)
    }

    /// The peer; nil until the handshake finished.
    var peer: Peer? {
        handshakeState.withLock { entry in
            if case .done(let peer) = entry.state { return peer }
            return nil
        }
    }

    /// Runs `run` as the handshake once (later calls wait for the first outcome) and returns its peer. A failure
    /// closes the transport and is thrown to every caller, as a `SecurityError` (`closedDuringHandshake` for any
    /// other error).
    func handshake(_ run: () async throws -> Peer) async throws -> Peer {
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
        // Every read and write passes here: once settled, no continuation (and no hop to another thread).
        if case .settled(let result) = next { return try result.get() }
        if case .run = next {
            do {
                let peer = try await run()
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

    /// Drives OpenSSL's handshake to its end: sends what it wrote, feeds it what the transport brings.
    func driveHandshake() async throws {
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
                return
            case .needInput:
                let input = try await transport.read(maxBytes: Self.handshakeInputLimit)
                guard !input.isEmpty else { throw SecurityError.closedDuringHandshake }
                engine.withLock { $0.feed(input) }
            case .closed:
                throw SecurityError.closedDuringHandshake
            case .failed(let reason):
                throw SecurityError.handshakeFailed(reason)
            }
        }
    }

    /// Decrypted bytes, at most `maxBytes` (positive), reading `inputLimit` bytes of ciphertext at a time; empty at
    /// the end of the stream. Call after the handshake.
    func read(maxBytes: Int, inputLimit: Int) async throws -> [UInt8] {
        while true {
            let (bytes, step) = engine.withLock { $0.read(maxBytes: maxBytes) }
            if !bytes.isEmpty { return bytes }
            switch step {
            case .done, .needInput:
                let input = try await transport.read(maxBytes: inputLimit)
                if input.isEmpty { return [] }
                engine.withLock { $0.feed(input) }
            case .closed:
                return []
            case .failed(let reason):
                throw SecurityError.connectionFailed(reason)
            }
        }
    }

    /// Encrypts `pieces` in order and sends the records, suspending while the transport is full.
    func send(_ pieces: [ArraySlice<UInt8>]) async throws {
        let records = try engine.withLock { engine throws(SecurityError) in try engine.write(pieces) }
        if !records.isEmpty { try await transport.write(records) }
    }

    /// Sends a close_notify when the handshake finished, then shuts down the transport's write side.
    func finishWriting() async {
        if peer != nil {
            let records = engine.withLock { $0.closeNotify() }
            if !records.isEmpty { try? await transport.write(records) }
        }
        await transport.finishWriting()
    }

    /// Closes the transport at once; a handshake under way fails (`closedDuringHandshake`).
    func close() {
        transport.close()
        finishHandshake(.failed(.closedDuringHandshake))
    }

    private func finishHandshake(_ outcome: HandshakeState) {
        let waiters = handshakeState.withLock { entry -> [CheckedContinuation<Peer, any Error>] in
            switch entry.state {
            case .done, .failed: return []  // the first outcome stands
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
