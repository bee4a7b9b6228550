import CFerryLinux
import Glibc

/// A network interface and one of its IPv4 addresses, as `getifaddrs(3)` reports them.
///
/// Why: discovery sends and joins multicast per interface (IP_MULTICAST_IF / IP_ADD_MEMBERSHIP take an
/// interface address), and must skip interfaces that are down or cannot multicast.
public struct NetworkInterface: Hashable, Sendable {
    /// The interface name, e.g. `"lo"`, `"eth0"`.
    public var name: String
    /// The interface index (`if_nametoindex(3)`), as used in IPv6 scope IDs.
    public var index: UInt32
    /// One IPv4 address of the interface; nil for an interface without any.
    public var ipv4: IPv4Address?
    /// IFF_UP.
    public var isUp: Bool
    /// IFF_LOOPBACK.
    public var isLoopback: Bool
    /// IFF_MULTICAST.
    public var supportsMulticast: Bool
    /// The prefix length of `ipv4`'s network (from its netmask); nil when unknown or without an IPv4 address.
    public var ipv4PrefixLength: Int?

    /// Creates an interface description.
    public init(
        name: String, index: UInt32, ipv4: IPv4Address?, isUp: Bool, isLoopback: Bool, supportsMulticast: Bool,
        ipv4PrefixLength: Int? = nil
    ) {
        self.name = name
        self.index = index
        self.ipv4 = ipv4
        self.isUp = isUp
        self.isLoopback = isLoopback
        self.supportsMulticast = supportsMulticast
        self.ipv4PrefixLength = ipv4PrefixLength
    }

    /// Every interface (`getifaddrs(3)`): one entry per interface and IPv4 address, plus one entry with
    /// `ipv4 == nil` for each interface that has no IPv4 address. In the kernel's order.
    public static func all() throws -> [NetworkInterface] {
        var list: UnsafeMutablePointer<ifaddrs>?
        guard getifaddrs(&list) == 0 else { throw SystemError(call: "getifaddrs()", errno: .current) }
        defer { freeifaddrs(list) }
        var result: [NetworkInterface] = []
        var namesWithIPv4: Set<String> = []
        var entry = list
        while let current = entry {
            entry = current.pointee.ifa_next
            guard let cName = current.pointee.ifa_name else { continue }
            let name = String(cString: cName)
            let flags = current.pointee.ifa_flags
            var ipv4: IPv4Address?
            var prefixLength: Int?
            if let address = current.pointee.ifa_addr, Int32(address.pointee.sa_family) == AF_INET,
                case .ipv4(let host, _)? = SocketAddress(
                    UnsafeRawPointer(address),
                    length: socklen_t(MemoryLayout<sockaddr_in>.size))
            {
                ipv4 = host
                namesWithIPv4.insert(name)
                if let netmask = current.pointee.ifa_netmask, Int32(netmask.pointee.sa_family) == AF_INET,
                    case .ipv4(let mask, _)? = SocketAddress(
                        UnsafeRawPointer(netmask), length: socklen_t(MemoryLayout<sockaddr_in>.size))
                {
                    prefixLength = mask.rawValue.nonzeroBitCount
                }
            }
            result.append(
                NetworkInterface(
                    name: name, index: if_nametoindex(cName), ipv4: ipv4,
                    isUp: flags & UInt32(IFF_UP) != 0,
                    isLoopback: flags & UInt32(IFF_LOOPBACK) != 0,
                    supportsMulticast: flags & UInt32(IFF_MULTICAST) != 0, ipv4PrefixLength: prefixLength))
        }
        // Keep the IPv4 entries; keep one address-less entry for interfaces that have no IPv4 address.
        var seenWithout: Set<String> = []
        return result.filter { interface in
            if interface.ipv4 != nil { return true }
            if namesWithIPv4.contains(interface.name) { return false }
            return seenWithout.insert(interface.name).inserted
        }
    }
}
