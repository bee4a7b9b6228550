import Glibc

/// An IP socket address: an IPv4 or IPv6 host and a port.
///
/// Why: one value type for every address the reactor binds, connects, sends to or reports, so callers
/// never touch `sockaddr_storage`. IPv6 carries its scope ID (the interface index of a link-local address).
/// Text forms: `"1.2.3.4:5"`, `"[::1]:5"`, `"[fe80::1%2]:5"` (scope as an interface index).
public enum SocketAddress: Hashable, Sendable, CustomStringConvertible {
    /// An IPv4 host and port.
    case ipv4(IPv4Address, port: UInt16)
    /// An IPv6 host, port and scope ID (0 when the address needs no scope).
    case ipv6(IPv6Address, port: UInt16, scopeID: UInt32)

    /// The port number.
    public var port: UInt16 {
        switch self {
        case .ipv4(_, let port), .ipv6(_, let port, _): return port
        }
    }

    /// The same host with another port.
    public func withPort(_ port: UInt16) -> SocketAddress {
        switch self {
        case .ipv4(let host, _): return .ipv4(host, port: port)
        case .ipv6(let host, _, let scopeID): return .ipv6(host, port: port, scopeID: scopeID)
        }
    }

    /// `"1.2.3.4:5"` or `"[::1]:5"`.
    public var description: String {
        switch self {
        case .ipv4(let host, let port): return "\(host):\(port)"
        case .ipv6: return "[\(hostDescription)]:\(port)"
        }
    }

    /// The host alone: `"1.2.3.4"`, `"::1"`, `"fe80::1%2"`.
    public var hostDescription: String {
        switch self {
        case .ipv4(let host, _): return host.description
        case .ipv6(let host, _, let scopeID): return scopeID == 0 ? host.description : "\(host)%\(scopeID)"
        }
    }

    /// The address family, `AF_INET` or `AF_INET6`.
    var family: Int32 {
        switch self {
        case .ipv4: return AF_INET
        case .ipv6: return AF_INET6
        }
    }
}
