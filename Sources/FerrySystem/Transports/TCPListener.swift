import CFerryLinux
import Glibc

/// A listening TCP socket owned by the reactor.
///
/// Why: accepting is where a process meets its descriptor limit; the listener must keep serving (backing off,
/// never spinning) when `accept4` fails with EMFILE/ENFILE, and ignore connections that died before being
/// accepted.
public final class TCPListener: Sendable {
    /// How long to wait before retrying after EMFILE / ENFILE / ENOBUFS / ENOMEM.
    static let resourceBackOff = Duration.milliseconds(100)

    /// The bound address (with the kernel's port when bound to port 0).
    public let localAddress: SocketAddress
    let registration: Registration
    private let reactor: Reactor

    init(reactor: Reactor, registration: Registration, localAddress: SocketAddress) {
        self.reactor = reactor
        self.registration = registration
        self.localAddress = localAddress
    }

    deinit {
        close()
    }

    /// The next accepted connection (`accept4(2)` with SOCK_NONBLOCK | SOCK_CLOEXEC; TCP_NODELAY set).
    ///
    /// When the process or system is out of descriptors or memory, waits `resourceBackOff` and retries instead of
    /// failing. Connections aborted before they were accepted are skipped.
    /// - Throws: `ReactorError.closed` after `close()`, `CancellationError`, `ReactorError.reactorShutDown`, or a
    ///   `SystemError` ("accept4()") for other failures.
    public func accept() async throws -> TCPConnection {
        while true {
            let outcome = try registration.withDescriptor { $0._accept() }
            switch outcome {
            case .success(.processed(let (descriptor, remote))):
                do {
                    return try reactor.adoptConnection(descriptor, remoteAddress: remote)
                } catch let error as ReactorError {
                    throw error
                } catch {
                    continue  // this connection failed (e.g. reset at once); keep serving
                }
            case .success(.wouldBlock):
                try await registration.waitUntilReady(for: .read)
            case .failure(let errno) where Self.isResourceShortage(errno):
                do {
                    let deadline = ContinuousClock.now + Self.resourceBackOff
                    try await registration.waitUntilReady(for: .closeOrDeadline, deadline: deadline)
                } catch ReactorError.timedOut {
                    continue
                }
            case .failure(let errno) where Self.isAbortedConnection(errno):
                continue
            case .failure(let errno):
                throw SystemError(call: "accept4()", errno: errno)
            }
        }
    }

    /// Stops listening (`close(2)`); a pending `accept()` throws `ReactorError.closed`. Idempotent.
    public func close() {
        registration.close(reason: .closed)
    }

    private static func isResourceShortage(_ errno: Errno) -> Bool {
        errno == .tooManyOpenFiles || errno == .tooManyOpenFilesInSystem || errno == .noBufferSpace
            || errno == .noMemory
    }

    /// accept(2) "Error handling": errors of the pending connection that mean "try again".
    private static func isAbortedConnection(_ errno: Errno) -> Bool {
        [ECONNABORTED, EPROTO, EPERM, ENETDOWN, ENOPROTOOPT, EHOSTDOWN, ENONET, EHOSTUNREACH, EOPNOTSUPP, ENETUNREACH]
            .contains(errno.rawValue)
    }
}
