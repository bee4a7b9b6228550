import Glibc

extension SocketAddress {
    /// Reads a C socket address (`sockaddr_in` or `sockaddr_in6`); nil for other families or a short length.
    init?(_ storage: UnsafeRawPointer, length: socklen_t) {
        guard Int(length) >= MemoryLayout<sa_family_t>.size else { return nil }
        let family = storage.loadUnaligned(as: sa_family_t.self)
        switch Int32(family) {
        case AF_INET where Int(length) >= MemoryLayout<sockaddr_in>.size:
            let address = storage.loadUnaligned(as: sockaddr_in.self)
            self = .ipv4(
                IPv4Address(rawValue: UInt32(bigEndian: address.sin_addr.s_addr)),
                port: UInt16(bigEndian: address.sin_port))
        case AF_INET6 where Int(length) >= MemoryLayout<sockaddr_in6>.size:
            let address = storage.loadUnaligned(as: sockaddr_in6.self)
            self = .ipv6(
                IPv6Address(address.sin6_addr), port: UInt16(bigEndian: address.sin6_port),
                scopeID: address.sin6_scope_id)
        default:
            return nil
        }
    }

    /// Reads a filled `sockaddr_storage`.
    init?(storage: sockaddr_storage, length: socklen_t) {
        var storage = storage
        guard let address = withUnsafePointer(to: &storage, { SocketAddress(UnsafeRawPointer($0), length: length) })
        else { return nil }
        self = address
    }

    /// Calls `body` with this address as a C `sockaddr` pointer and its length.
    func withSockAddr<Result>(_ body: (UnsafePointer<sockaddr>, socklen_t) throws -> Result) rethrows -> Result {
        switch self {
        case .ipv4(let host, let port):
            var address = sockaddr_in()
            address.sin_family = sa_family_t(AF_INET)
            address.sin_port = port.bigEndian
            address.sin_addr = host.inAddr
            return try withUnsafePointer(to: &address) { pointer in
                try pointer.withMemoryRebound(to: sockaddr.self, capacity: 1) {
                    try body($0, socklen_t(MemoryLayout<sockaddr_in>.size))
                }
            }
        case .ipv6(let host, let port, let scopeID):
            var address = sockaddr_in6()
            address.sin6_family = sa_family_t(AF_INET6)
            address.sin6_port = port.bigEndian
            address.sin6_addr = host.in6Addr
            address.sin6_scope_id = scopeID
            return try withUnsafePointer(to: &address) { pointer in
                try pointer.withMemoryRebound(to: sockaddr.self, capacity: 1) {
                    try body($0, socklen_t(MemoryLayout<sockaddr_in6>.size))
                }
            }
        }
    }
}
