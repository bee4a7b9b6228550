import Glibc

/// A blocking TCP socket on 127.0.0.1 with a 10 s receive timeout, so a broken proxy fails a test instead of
/// hanging it: the raw end the fault-proxy tests use on both sides of the proxy.
struct LoopbackSocket {
    struct Failure: Error, CustomStringConvertible {
        var description: String
    }

    let fd: Int32
    var port: UInt16 = 0

    static func listen() throws -> LoopbackSocket {
        let fd = try makeSocket()
        var address = loopback(port: 0)
        var length = socklen_t(MemoryLayout<sockaddr_in>.size)
        let ok = withUnsafeMutablePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) {
                bind(fd, $0, length) == 0 && Glibc.listen(fd, 16) == 0 && getsockname(fd, $0, &length) == 0
            }
        }
        guard ok else { try fail(fd, "bind/listen") }
        return LoopbackSocket(fd: fd, port: UInt16(bigEndian: address.sin_port))
    }

    static func connect(port: UInt16) throws -> LoopbackSocket {
        let fd = try makeSocket()
        var address = loopback(port: port)
        let result = withUnsafePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) {
                Glibc.connect(fd, $0, socklen_t(MemoryLayout<sockaddr_in>.size))
            }
        }
        guard result == 0 else { try fail(fd, "connect to port \(port)") }
        return LoopbackSocket(fd: fd)
    }

    func accept() throws -> LoopbackSocket {
        let accepted = Glibc.accept(fd, nil, nil)
        guard accepted >= 0 else { throw Failure(description: "accept failed, errno \(errno)") }
        var timeout = timeval(tv_sec: 10, tv_usec: 0)
        _ = setsockopt(accepted, SOL_SOCKET, SO_RCVTIMEO, &timeout, socklen_t(MemoryLayout<timeval>.size))
        return LoopbackSocket(fd: accepted)
    }

    func write(_ bytes: [UInt8]) throws {
        var offset = 0
        while offset < bytes.count {
            let sent = bytes[offset...].withUnsafeBytes { send(fd, $0.baseAddress, $0.count, Int32(MSG_NOSIGNAL)) }
            guard sent > 0 else { throw Failure(description: "send failed, errno \(errno)") }
            offset += sent
        }
    }

    func read(exactly count: Int) throws -> [UInt8] {
        var result: [UInt8] = []
        while result.count < count {
            let chunk = try readSome(max: count - result.count)
            guard !chunk.isEmpty else { throw Failure(description: "end of stream after \(result.count) bytes") }
            result += chunk
        }
        return result
    }

    /// Reads until end of stream (a reset counts as the end); throws only on timeout.
    func readToEnd() throws -> [UInt8] {
        var result: [UInt8] = []
        while true {
            let chunk = try readSome(max: 65_536)
            if chunk.isEmpty { return result }
            result += chunk
        }
    }

    private func readSome(max: Int) throws -> [UInt8] {
        var buffer = [UInt8](repeating: 0, count: max)
        while true {
            let count = recv(fd, &buffer, max, 0)
            if count >= 0 { return Array(buffer[..<count]) }
            if errno == EINTR { continue }
            if errno == ECONNRESET { return [] }
            throw Failure(description: "recv failed (errno \(errno)); EAGAIN means nothing came within 10 s")
        }
    }

    func isReadable(withinMilliseconds milliseconds: Int32) -> Bool {
        var descriptor = pollfd(fd: fd, events: Int16(POLLIN), revents: 0)
        return poll(&descriptor, 1, milliseconds) > 0
    }

    func close() {
        _ = Glibc.close(fd)
    }

    private static func makeSocket() throws -> Int32 {
        let fd = socket(AF_INET, Int32(SOCK_STREAM.rawValue) | Int32(SOCK_CLOEXEC.rawValue), 0)
        guard fd >= 0 else { throw Failure(description: "socket failed, errno \(errno)") }
        var timeout = timeval(tv_sec: 10, tv_usec: 0)
        _ = setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &timeout, socklen_t(MemoryLayout<timeval>.size))
        return fd
    }

    private static func loopback(port: UInt16) -> sockaddr_in {
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_port = port.bigEndian
        address.sin_addr.s_addr = UInt32(0x7F00_0001).bigEndian
        return address
    }

    private static func fail(_ fd: Int32, _ what: String) throws -> Never {
        let saved = errno
        _ = Glibc.close(fd)
        throw Failure(description: "\(what) failed, errno \(saved)")
    }
}
