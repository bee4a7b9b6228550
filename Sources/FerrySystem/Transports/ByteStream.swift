/// A reliable byte stream. The session layer talks to links only through this protocol, so that a TLS layer
/// can wrap a `TCPConnection` without touching session logic.
///
/// Why a protocol: links are TCP today, TLS over TCP next, an in-memory pair in tests; the session needs
/// only ordered bytes, backpressure and close.
public protocol ByteStream: AnyObject, Sendable {
    /// Up to `maxBytes` bytes, as many as are available in one call; `[]` means end of stream. One reader at a
    /// time.
    func read(maxBytes: Int) async throws -> [UInt8]
    /// Hands all bytes to the transport in call order; concurrent calls never interleave their bytes (FIFO
    /// queue). Suspends while the send buffer is full (backpressure). Throws after close or on a socket error
    /// (EPIPE...).
    func write(_ bytes: [UInt8]) async throws
    /// Writes `blocks` in order, as one `write` of their concatenation would; a stream that frames or encrypts its
    /// bytes may do so without joining them.
    func write(blocks: [[UInt8]]) async throws
    /// Closes both directions, fails pending reads/writes with `ReactorError.closed`. Idempotent.
    func close()
    /// Ends the write direction after every write already made (the peer reads the end of the stream); reading
    /// stays possible. Call after the last `write` returned. Closing still frees the stream.
    func finishWriting() async
    /// The local end's address.
    var localAddress: SocketAddress { get }
    /// The remote end's address.
    var remoteAddress: SocketAddress { get }
    /// Bytes handed to the kernel that the peer's end has not acknowledged yet: in the kernel's send buffer or on
    /// the way; not those still queued in this process (nil when the transport cannot tell).
    var unacknowledgedBytes: Int? { get }
    /// Seconds the transport's sending has waited for the peer's receive window to open, since it opened (nil when
    /// it cannot tell).
    var receiveWindowLimitedSeconds: Double? { get }
}

extension ByteStream {
    /// One `write` per block.
    public func write(blocks: [[UInt8]]) async throws {
        for block in blocks { try await write(block) }
    }

    /// A stream that cannot half-close does nothing: `close` ends it.
    public func finishWriting() async {}

    /// Unknown, unless the transport can tell.
    public var unacknowledgedBytes: Int? { nil }

    /// Unknown, unless the transport can tell.
    public var receiveWindowLimitedSeconds: Double? { nil }
}
