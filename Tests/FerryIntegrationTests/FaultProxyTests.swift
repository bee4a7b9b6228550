import FerryTestSupport
import Glibc
import Testing

extension IntegrationTests {
    /// The test plays both ends: a client connected to the proxy and the server the proxy connects to.
    /// Every socket has a 10 s receive timeout, so a broken proxy fails the test instead of hanging it.
    @Suite("FaultProxy")
    struct FaultProxyTests {
        @Test func passesBytesBothWays() throws {
            let server = try TCPEnd.listen()
            defer { server.close() }
            let proxy = try FaultProxy(targetPort: server.port)
            defer { proxy.close() }
            let (client, accepted) = try connectPair(through: proxy, server: server)
            defer { client.close(); accepted.close() }
            for round in 0..<12 {
                let chunk = pattern(16_384, seed: round)
                try client.write(chunk)
                #expect(try accepted.read(exactly: chunk.count) == chunk)
                try accepted.write(chunk.reversed())
                #expect(try client.read(exactly: chunk.count) == chunk.reversed())
            }
            #expect(proxy.acceptedConnections == 1)
        }

        @Test func truncateClosesBothSidesAfterTheLimit() throws {
            let server = try TCPEnd.listen()
            defer { server.close() }
            let proxy = try FaultProxy(
                targetPort: server.port, mode: .truncate(afterBytes: 100, direction: .clientToServer))
            defer { proxy.close() }
            let (client, accepted) = try connectPair(through: proxy, server: server)
            defer { client.close(); accepted.close() }
            let sent = pattern(1_000, seed: 1)
            try client.write(sent)
            #expect(try accepted.readToEnd() == Array(sent.prefix(100)))
            #expect(try client.readToEnd().isEmpty)
        }

        @Test func truncateServerToClient() throws {
            let server = try TCPEnd.listen()
            defer { server.close() }
            let proxy = try FaultProxy(targetPort: server.port, mode: .truncate(afterBytes: 10, direction: .serverToClient))
            defer { proxy.close() }
            let (client, accepted) = try connectPair(through: proxy, server: server)
            defer { client.close(); accepted.close() }
            try client.write(Array("request".utf8))
            #expect(try accepted.read(exactly: 7) == Array("request".utf8))
            try accepted.write(pattern(50, seed: 2))
            #expect(try client.readToEnd() == Array(pattern(50, seed: 2).prefix(10)))
        }

        @Test func flipBitsCorruptsEveryNthByteOfOneDirection() throws {
            let server = try TCPEnd.listen()
            defer { server.close() }
            let proxy = try FaultProxy(targetPort: server.port, mode: .flipBits(every: 7))
            defer { proxy.close() }
            let (client, accepted) = try connectPair(through: proxy, server: server)
            defer { client.close(); accepted.close() }
            let sent = pattern(1_000, seed: 3)
            for start in stride(from: 0, to: sent.count, by: 333) {  // offsets count across writes
                try client.write(Array(sent[start..<min(start + 333, sent.count)]))
            }
            let received = try accepted.read(exactly: sent.count)
            let flipped = (0..<sent.count).filter { received[$0] != sent[$0] }
            #expect(flipped == Array(stride(from: 6, to: sent.count, by: 7)))
            #expect(flipped.allSatisfy { received[$0] ^ sent[$0] == 0x01 })
            try accepted.write(sent)
            #expect(try client.read(exactly: sent.count) == sent)  // the other direction is untouched
        }

        @Test func stallHoldsBytesUntilModeChanges() throws {
            let server = try TCPEnd.listen()
            defer { server.close() }
            let proxy = try FaultProxy(targetPort: server.port)
            defer { proxy.close() }
            let (client, accepted) = try connectPair(through: proxy, server: server)
            defer { client.close(); accepted.close() }
            proxy.mode = .stall
            try client.write(Array("held".utf8))
            #expect(!accepted.isReadable(withinMilliseconds: 300))
            proxy.mode = .delay(.milliseconds(20))
            #expect(try accepted.read(exactly: 4) == Array("held".utf8))
            proxy.mode = .pass
            try accepted.write(Array("done".utf8))
            #expect(try client.read(exactly: 4) == Array("done".utf8))
        }

        @Test func blackHoleNeverAnswersNorConnects() throws {
            let server = try TCPEnd.listen()
            defer { server.close() }
            let proxy = try FaultProxy(targetPort: server.port, mode: .blackHole)
            defer { proxy.close() }
            let client = try TCPEnd.connect(port: proxy.port)
            defer { client.close() }
            try client.write(pattern(4_096, seed: 4))
            #expect(!client.isReadable(withinMilliseconds: 300))
            #expect(!server.isReadable(withinMilliseconds: 0))  // no pending connection at the target
        }

        @Test func closeEndsConnectionsAndListening() throws {
            let server = try TCPEnd.listen()
            defer { server.close() }
            let proxy = try FaultProxy(targetPort: server.port)
            let (client, accepted) = try connectPair(through: proxy, server: server)
            defer { client.close(); accepted.close() }
            proxy.close()
            #expect(try client.readToEnd().isEmpty)
            #expect(try accepted.readToEnd().isEmpty)
            #expect(throws: TCPEnd.Failure.self) { try TCPEnd.connect(port: proxy.port).close() }
            proxy.close()
        }

        private func connectPair(through proxy: FaultProxy, server: TCPEnd) throws -> (client: TCPEnd, accepted: TCPEnd) {
            let client = try TCPEnd.connect(port: proxy.port)
            do {
                return (client, try server.accept())
            } catch {
                client.close()
                throw error
            }
        }

        private func pattern(_ count: Int, seed: Int) -> [UInt8] {
            (0..<count).map { UInt8(truncatingIfNeeded: $0 &* 31 &+ seed &* 7 &+ ($0 >> 8)) }
        }
    }
}

/// A blocking TCP socket on 127.0.0.1 with a 10 s receive timeout.
private struct TCPEnd {
    struct Failure: Error, CustomStringConvertible {
        var description: String
    }

    let fd: Int32
    var port: UInt16 = 0

    static func listen() throws -> TCPEnd {
        let fd = try makeSocket()
        var address = loopback(port: 0)
        var length = socklen_t(MemoryLayout<sockaddr_in>.size)
        let ok = withUnsafeMutablePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) {
                bind(fd, $0, length) == 0 && Glibc.listen(fd, 16) == 0 && getsockname(fd, $0, &length) == 0
            }
        }
        guard ok else { try fail(fd, "bind/listen") }
        return TCPEnd(fd: fd, port: UInt16(bigEndian: address.sin_port))
    }

    static func connect(port: UInt16) throws -> TCPEnd {
        let fd = try makeSocket()
        var address = loopback(port: port)
        let result = withUnsafePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) {
                Glibc.connect(fd, $0, socklen_t(MemoryLayout<sockaddr_in>.size))
            }
        }
        guard result == 0 else { try fail(fd, "connect to port \(port)") }
        return TCPEnd(fd: fd)
    }

    func accept() throws -> TCPEnd {
        let accepted = Glibc.accept(fd, nil, nil)
        guard accepted >= 0 else { throw Failure(description: "accept failed, errno \(errno)") }
        var timeout = timeval(tv_sec: 10, tv_usec: 0)
        _ = setsockopt(accepted, SOL_SOCKET, SO_RCVTIMEO, &timeout, socklen_t(MemoryLayout<timeval>.size))
        return TCPEnd(fd: accepted)
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
