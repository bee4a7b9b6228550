import Glibc

/// An IPv4 or IPv6 socket address for the proxy's own sockets.
///
/// Why here and not FerrySystem's: the test support stays independent of the product's syscall
/// layer, so a bug there cannot hide behind the tool meant to expose it.
struct SocketAddress: Sendable {
    private var storage = sockaddr_storage()
    private(set) var length: socklen_t = 0

    var family: Int32 { Int32(storage.ss_family) }

    /// A numeric address (`127.0.0.1`, `::1`, `localhost`) and port.
    init(host: String, port: UInt16) throws {
        let numeric = host == "localhost" ? "127.0.0.1" : host
        var v4 = sockaddr_in()
        var v6 = sockaddr_in6()
        if inet_pton(AF_INET, numeric, &v4.sin_addr) == 1 {
            v4.sin_family = sa_family_t(AF_INET)
            v4.sin_port = port.bigEndian
            withUnsafeMutableBytes(of: &storage) { storage in
                withUnsafeBytes(of: v4) { storage.copyMemory(from: $0) }
            }
            length = socklen_t(MemoryLayout<sockaddr_in>.size)
        } else if inet_pton(AF_INET6, numeric, &v6.sin6_addr) == 1 {
            v6.sin6_family = sa_family_t(AF_INET6)
            v6.sin6_port = port.bigEndian
            withUnsafeMutableBytes(of: &storage) { storage in
                withUnsafeBytes(of: v6) { storage.copyMemory(from: $0) }
            }
            length = socklen_t(MemoryLayout<sockaddr_in6>.size)
        } else {
            throw TestSupportError.systemCall("inet_pton(\(host))", errno: EINVAL)
        }
    }

    /// A connected, close-on-exec TCP socket to this address (Nagle off); -1 with errno on failure.
    func connect() -> Int32 {
        let fd = socket(family, Int32(SOCK_STREAM.rawValue) | Int32(SOCK_CLOEXEC.rawValue), 0)
        guard fd >= 0 else { return -1 }
        var copy = storage
        let result = withUnsafePointer(to: &copy) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { address in
                while true {
                    let result = Glibc.connect(fd, address, length)
                    if result < 0 && errno == EINTR { continue }
                    return result
                }
            }
        }
        guard result == 0 else {
            let saved = errno
            Descriptor.close(fd)
            errno = saved
            return -1
        }
        SocketAddress.disableNagle(fd)
        return fd
    }

    static func disableNagle(_ fd: Int32) {
        var one: Int32 = 1
        _ = setsockopt(fd, Int32(IPPROTO_TCP), TCP_NODELAY, &one, socklen_t(MemoryLayout<Int32>.size))
    }

    /// A listening TCP socket on 127.0.0.1 with a kernel-chosen port.
    static func listenOnLoopback() throws -> (fd: Int32, port: UInt16) {
        let fd = socket(AF_INET, Int32(SOCK_STREAM.rawValue) | Int32(SOCK_CLOEXEC.rawValue), 0)
        guard fd >= 0 else { throw TestSupportError.systemCall("socket", errno: errno) }
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_addr.s_addr = UInt32(0x7F00_0001).bigEndian
        var length = socklen_t(MemoryLayout<sockaddr_in>.size)
        let bound = withUnsafeMutablePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { pointer in
                bind(fd, pointer, length) == 0 && listen(fd, 128) == 0 && getsockname(fd, pointer, &length) == 0
            }
        }
        guard bound else {
            let saved = errno
            Descriptor.close(fd)
            throw TestSupportError.systemCall("bind/listen 127.0.0.1", errno: saved)
        }
        return (fd, UInt16(bigEndian: address.sin_port))
    }
}
