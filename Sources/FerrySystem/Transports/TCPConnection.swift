import CFerryLinux
import Glibc
import Synchronization

/// A TCP connection owned by the reactor: a `ByteStream` with TCP_NODELAY on and MSG_NOSIGNAL on every send.
///
/// Why: this is the reliable link under every session. Reads and writes run the non-blocking call on the
/// caller's task and suspend only on EAGAIN, so bytes are copied once (kernel to the returned array, the
/// caller's array to the kernel). Writers take turns in FIFO order, so concurrent writes never interleave, and
/// a writer suspends while the send buffer is full (backpressure).
public final class TCPConnection: ByteStream {
    private struct WriteState {
        var isClosed = false
        var isWriteShutDown = false
        var hasActiveWriter = false
        /// Writers waiting for their turn, oldest first; non-empty only while a writer is active.
        var queue: [(ticket: UInt64, continuation: CheckedContinuation<Void, any Error>)] = []
        var nextTicket: UInt64 = 0
        var queuedBytes = 0
        var shutdownWhenIdle = false
    }

    /// Our end of the connection.
    public let localAddress: SocketAddress
    /// The peer's end of the connection.
    public let remoteAddress: SocketAddress
    let registration: Registration
    private let reactor: Reactor
    private let writes = Mutex(WriteState())

    init(reactor: Reactor, registration: Registration, localAddress: SocketAddress, remoteAddress: SocketAddress) {
        self.reactor = reactor
        self.registration = registration
        self.localAddress = localAddress
        self.remoteAddress = remoteAddress
    }

    deinit {
        close()
    }

    /// Reads up to `maxBytes` bytes (`recv(2)`), as many as the socket holds, suspending until at least one byte
    /// or the end of the stream is there. `[]` means the peer closed its side. The returned array may keep
    /// `maxBytes` of capacity. One reader at a time.
    /// - Throws: `ReactorError.closed` after `close()`, `CancellationError`, or `SystemError` ("recv()",
    ///   e.g. ECONNRESET).
    public func read(maxBytes: Int) async throws -> [UInt8] {
        precondition(maxBytes > 0, "read(maxBytes:) needs a positive maxBytes")
        while true {
            let outcome = try registration.withDescriptor { descriptor -> IOResult<[UInt8]> in
                var result: Result<IOResult<Int>, Errno> = .success(.wouldBlock)
                let bytes = [UInt8](unsafeUninitializedCapacity: maxBytes) { buffer, count in
                    result = descriptor._receive(into: UnsafeMutableRawBufferPointer(buffer))
                    if case .success(.processed(let received)) = result { count = received }
                }
                switch try result.get("recv()") {
                case .processed: return .processed(bytes)
                case .wouldBlock: return .wouldBlock
                }
            }
            if case .processed(let bytes) = outcome { return bytes }
            try await registration.waitUntilReady(for: .read)
        }
    }

    /// Sends all of `bytes` (`send(2)` with MSG_NOSIGNAL) after every earlier write, suspending while the send
    /// buffer is full.
    ///
    /// Cancellation while waiting for its turn withdraws the write; once part of `bytes` is sent, cancelling
    /// closes the connection (the stream would be corrupt otherwise).
    /// - Throws: `ReactorError.closed` after `close()`, `CancellationError`, `SystemError` ("send()", e.g.
    ///   EPIPE or ECONNRESET when the peer is gone; EPIPE after `shutdownWrite()`).
    public func write(_ bytes: [UInt8]) async throws {
        try await takeWriteTurn(byteCount: bytes.count)
        var offset = 0
        defer { endWriteTurn(unsentBytes: bytes.count - offset) }
        while offset < bytes.count {
            let outcome = try registration.withDescriptor { descriptor in
                try bytes.withUnsafeBytes { raw in
                    try descriptor._send(UnsafeRawBufferPointer(rebasing: raw[offset...])).get("send()")
                }
            }
            switch outcome {
            case .processed(let sent):
                offset += sent
                writes.withLock { $0.queuedBytes -= sent }
            case .wouldBlock:
                do {
                    try await registration.waitUntilReady(for: .write)
                } catch let error as CancellationError {
                    if offset > 0 { close() }
                    throw error
                }
            }
        }
    }

    /// Bytes handed to `write` and not yet accepted by the kernel (including writers waiting for their turn).
    public var queuedWriteBytes: Int { writes.withLock { $0.queuedBytes } }

    /// For tests: writers waiting for their turn.
    var waitingWriterCount: Int { writes.withLock { $0.queue.count } }

    /// Half-closes the connection (`shutdown(2)`, SHUT_WR) once every write already queued is sent; the peer then
    /// reads the end of the stream. Later writes throw EPIPE. Reading stays possible.
    public func shutdownWrite() {
        let now = writes.withLock { state -> Bool in
            state.isWriteShutDown = true
            if state.hasActiveWriter {
                state.shutdownWhenIdle = true
                return false
            }
            return true
        }
        if now { shutDownWriteSide() }
    }

    /// `ByteStream.finishWriting`: `shutdownWrite()`.
    public func finishWriting() async {
        shutdownWrite()
    }

    /// Closes both directions (`close(2)`) and fails pending reads and writes with `ReactorError.closed`.
    /// Idempotent.
    public func close() {
        let waiting = writes.withLock { state in
            state.isClosed = true
            defer { state.queue.removeAll() }
            return state.queue
        }
        registration.close(reason: .closed)
        for writer in waiting { writer.continuation.resume(throwing: ReactorError.closed) }
    }

    private func shutDownWriteSide() {
        _ = try? registration.withDescriptor { $0._shutdown(Int32(SHUT_WR)) }
    }

    /// Waits until this writer is the active one (FIFO), counting its bytes as queued meanwhile.
    private func takeWriteTurn(byteCount: Int) async throws {
        let ticket = try writes.withLock { state throws -> UInt64? in
            if state.isClosed { throw ReactorError.closed }
            if state.isWriteShutDown { throw SystemError(call: "send()", errno: .brokenPipe) }
            state.queuedBytes += byteCount
            if !state.hasActiveWriter {
                state.hasActiveWriter = true
                return nil
            }
            defer { state.nextTicket &+= 1 }
            return state.nextTicket
        }
        guard let ticket else { return }
        do {
            try await withTaskCancellationHandler {
                try await withCheckedThrowingContinuation { (continuation: CheckedContinuation<Void, any Error>) in
                    let outcome = writes.withLock { state -> Result<Void, any Error>? in
                        if state.isClosed { return .failure(ReactorError.closed) }
                        if Task.isCancelled { return .failure(CancellationError()) }
                        if !state.hasActiveWriter {  // the writer before us finished in the meantime
                            state.hasActiveWriter = true
                            return .success(())
                        }
                        state.queue.append((ticket, continuation))
                        return nil
                    }
                    if let outcome { continuation.resume(with: outcome) }
                }
            } onCancel: {
                let continuation = writes.withLock { state in
                    state.queue.firstIndex { $0.ticket == ticket }.map { state.queue.remove(at: $0).continuation }
                }
                continuation?.resume(throwing: CancellationError())
            }
        } catch {
            writes.withLock { $0.queuedBytes -= byteCount }
            throw error
        }
    }

    /// Passes the turn to the next writer, or goes idle (and performs a requested write shutdown).
    private func endWriteTurn(unsentBytes: Int) {
        let (next, shutDownNow) = writes.withLock { state -> (CheckedContinuation<Void, any Error>?, Bool) in
            state.queuedBytes -= unsentBytes
            if !state.queue.isEmpty { return (state.queue.removeFirst().continuation, false) }
            state.hasActiveWriter = false
            defer { state.shutdownWhenIdle = false }
            return (nil, state.shutdownWhenIdle)
        }
        next?.resume()
        if shutDownNow { shutDownWriteSide() }
    }
}
