import Foundation
import Glibc

/// A blocking TCP socket on loopback, with a receive timeout so that a silent peer fails a test instead of hanging
/// it: the raw end the tests use against proxies and `ferry` processes (listening on 127.0.0.1, or connecting from
/// any 127.0.0.0/8 source address, so that one machine plays many hosts).
///
/// Blocking: from async code, call it through `onOwnThread`.
public struct LoopbackSocket: Sendable {
    public struct Failure: Error, CustomStringConvertible {
        public var description: String
        /// The errno of the failed call.
        public var code: Int32

        init(_ description: String, code: Int32) {
            self.description = description
            self.code = code
        }
    }

    public let fd: Int32
    /// The listening port (`listen()` only).
    public private(set) var port: UInt16 = 0

    /// A listening socket on 127.0.0.1 with a port the kernel chooses.
    public static func listen(receiveTimeoutSeconds: Int = 10) throws -> LoopbackSocket {
        let fd = try makeSocket(receiveTimeoutSeconds: receiveTimeoutSeconds)
        var address = address("127.0.0.1", port: 0)
        var length = socklen_t(MemoryLayout<sockaddr_in>.size)
        let ok = withUnsafeMutablePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) {
                bind(fd, $0, length) == 0 && Glibc.listen(fd, 16) == 0 && getsockname(fd, $0, &length) == 0
            }
        }
        guard ok else { try fail(fd, "bind/listen") }
        return LoopbackSocket(fd: fd, port: UInt16(bigEndian: address.sin_port))
    }

    /// A socket bound to `source` (any 127.0.0.0/8 address) and connected to 127.0.0.1:`port`.
    public static func connect(
        port: UInt16, from source: String = "127.0.0.1", receiveTimeoutSeconds: Int = 10
    ) throws -> LoopbackSocket {
        let fd = try makeSocket(receiveTimeoutSeconds: receiveTimeoutSeconds)
        var local = address(source, port: 0)
        var remote = address("127.0.0.1", port: port)
        let size = socklen_t(MemoryLayout<sockaddr_in>.size)
        let bound = withUnsafePointer(to: &local) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { bind(fd, $0, size) }
        }
        guard bound == 0 else { try fail(fd, "bind to \(source)") }
        let connected = withUnsafePointer(to: &remote) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { Glibc.connect(fd, $0, size) }
        }
        guard connected == 0 else { try fail(fd, "connect from \(source) to port \(port)") }
        return LoopbackSocket(fd: fd)
    }

    /// The next connection on a listening socket, with a 10 s receive timeout.
    public func accept() throws -> LoopbackSocket {
        let accepted = Glibc.accept(fd, nil, nil)
        guard accepted >= 0 else { throw Failure("accept failed, errno \(errno)", code: errno) }
        Self.setReceiveTimeout(accepted, seconds: 10)
        return LoopbackSocket(fd: accepted)
    }

    /// Sends all of `bytes`; throws when the connection is gone.
    public func write(_ bytes: [UInt8]) throws {
        var offset = 0
        while offset < bytes.count {
            let sent = bytes[offset...].withUnsafeBytes { send(fd, $0.baseAddress, $0.count, Int32(MSG_NOSIGNAL)) }
            if sent < 0, errno == EINTR { continue }
            guard sent > 0 else { throw Failure("send failed, errno \(errno)", code: errno) }
            offset += sent
        }
    }

    /// Exactly `count` bytes; throws at the end of the stream or on the receive timeout.
    public func read(exactly count: Int) throws -> [UInt8] {
        var result: [UInt8] = []
        while result.count < count {
            let chunk = try readSome(max: count - result.count)
            guard !chunk.isEmpty else { throw Failure("end of stream after \(result.count) bytes", code: 0) }
            result += chunk
        }
        return result
    }

    /// Up to `count` bytes: fewer when the stream ends or the receive timeout passes first.
    public func read(upTo count: Int) -> [UInt8] {
        var result: [UInt8] = []
        while result.count < count {
            guard let chunk = try? readSome(max: count - result.count), !chunk.isEmpty else { break }
            result += chunk
        }
        return result
    }

    /// Reads until end of stream (a reset counts as the end); throws only on the receive timeout.
    public func readToEnd() throws -> [UInt8] {
        var result: [UInt8] = []
        while true {
            let chunk = try readSome(max: 65_536)
            if chunk.isEmpty { return result }
            result += chunk
        }
    }

    /// Reads (and drops) until the peer closes or resets the connection (true), or nothing comes for
    /// `timeoutSeconds` (false); the receive timeout stays `timeoutSeconds` afterwards.
    public func waitForClose(timeoutSeconds: Int) -> Bool {
        Self.setReceiveTimeout(fd, seconds: timeoutSeconds)
        while true {
            guard let chunk = try? readSome(max: 4096) else { return false }
            if chunk.isEmpty { return true }
        }
    }

    /// What one `recv` returns: empty at the end of the stream or on a reset; throws on the receive timeout
    /// (`code` EAGAIN) or another error.
    public func readSome(max: Int) throws -> [UInt8] {
        var buffer = [UInt8](repeating: 0, count: max)
        while true {
            let count = recv(fd, &buffer, max, 0)
            if count >= 0 { return Array(buffer[..<count]) }
            if errno == EINTR { continue }
            if errno == ECONNRESET { return [] }
            throw Failure(
                "recv failed (errno \(errno)); EAGAIN means nothing came within the receive timeout", code: errno)
        }
    }

    public func isReadable(withinMilliseconds milliseconds: Int32) -> Bool {
        var descriptor = pollfd(fd: fd, events: Int16(POLLIN), revents: 0)
        return poll(&descriptor, 1, milliseconds) > 0
    }

    /// Shuts down one or both directions (a `recv` blocked on another thread returns).
    public func shutdown(_ how: Int32 = Int32(SHUT_RDWR)) {
        _ = Glibc.shutdown(fd, how)
    }

    public func close() {
        _ = Glibc.close(fd)
    }

    private static func makeSocket(receiveTimeoutSeconds: Int) throws -> Int32 {
        let fd = socket(AF_INET, Int32(SOCK_STREAM.rawValue) | Int32(SOCK_CLOEXEC.rawValue), 0)
        guard fd >= 0 else { throw Failure("socket failed, errno \(errno)", code: errno) }
        setReceiveTimeout(fd, seconds: receiveTimeoutSeconds)
        return fd
    }

    private static func setReceiveTimeout(_ fd: Int32, seconds: Int) {
        var timeout = timeval(tv_sec: seconds, tv_usec: 0)
        _ = setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &timeout, socklen_t(MemoryLayout<timeval>.size))
    }

    private static func address(_ text: String, port: UInt16) -> sockaddr_in {
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_port = port.bigEndian
        address.sin_addr.s_addr = inet_addr(text)
        return address
    }

    private static func fail(_ fd: Int32, _ what: String) throws -> Never {
        let saved = errno
        _ = Glibc.close(fd)
        throw Failure("\(what) failed, errno \(saved)", code: saved)
    }
}

/// Runs a blocking call on a thread of its own, so that it never holds one of the few cooperative threads (the
/// sessions and processes under test need them).
public func onOwnThread<T: Sendable>(_ body: @escaping @Sendable () throws -> T) async throws -> T {
    try await withCheckedThrowingContinuation { continuation in
        Thread { continuation.resume(with: Result { try body() }) }.start()
    }
}
