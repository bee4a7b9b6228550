import FerrySystem
import Synchronization

/// A `ByteStream` over a TCP connection that passes on only the first `passing` writes and swallows the rest: a TLS
/// client over it sends its preface and ClientHello, finishes its side of the handshake, and leaves the server
/// waiting for a Finished that never comes.
final class SwallowingStream: ByteStream {
    private let inner: TCPConnection
    private let remaining: Mutex<Int>

    init(_ inner: TCPConnection, passing: Int) {
        self.inner = inner
        self.remaining = Mutex(passing)
    }

    func read(maxBytes: Int) async throws -> [UInt8] {
        try await inner.read(maxBytes: maxBytes)
    }

    func write(_ bytes: [UInt8]) async throws {
        let pass = remaining.withLock { remaining in
            defer { remaining -= 1 }
            return remaining > 0
        }
        if pass { try await inner.write(bytes) }
    }

    func close() {
        inner.close()
    }

    var localAddress: SocketAddress { inner.localAddress }
    var remoteAddress: SocketAddress { inner.remoteAddress }
}
