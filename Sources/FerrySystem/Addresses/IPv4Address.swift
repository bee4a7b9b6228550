import Glibc

/// An IPv4 address, stored in host byte order.
///
/// Why: a value type that parses and prints dotted quads keeps `sockaddr_in` and byte-order handling
/// inside this module. `rawValue` is host order: `1.2.3.4` is `0x0102_0304`.
public struct IPv4Address: Hashable, Sendable, CustomStringConvertible {
    /// The address in host byte order (`a.b.c.d` is `a << 24 | b << 16 | c << 8 | d`).
    public var rawValue: UInt32

    /// The address whose host-order value is `rawValue`.
    public init(rawValue: UInt32) {
        self.rawValue = rawValue
    }

    /// The address `a.b.c.d`.
    public init(_ a: UInt8, _ b: UInt8, _ c: UInt8, _ d: UInt8) {
        rawValue = UInt32(a) << 24 | UInt32(b) << 16 | UInt32(c) << 8 | UInt32(d)
    }

    /// Parses a dotted quad such as `"192.168.1.20"` (`inet_pton(3)`, AF_INET); nil for anything else.
    public init?(_ string: String) {
        var address = in_addr()
        guard inet_pton(AF_INET, string, &address) == 1 else { return nil }
        rawValue = UInt32(bigEndian: address.s_addr)
    }

    /// `0.0.0.0`, every local address (for binding).
    public static let any = IPv4Address(rawValue: 0)
    /// `127.0.0.1`.
    public static let loopback = IPv4Address(127, 0, 0, 1)

    /// The four bytes, most significant first.
    public var octets: (UInt8, UInt8, UInt8, UInt8) {
        (
            UInt8(truncatingIfNeeded: rawValue >> 24), UInt8(truncatingIfNeeded: rawValue >> 16),
            UInt8(truncatingIfNeeded: rawValue >> 8), UInt8(truncatingIfNeeded: rawValue)
        )
    }

    /// True for `224.0.0.0/4`.
    public var isMulticast: Bool { rawValue >> 28 == 0xE }

    /// True for `127.0.0.0/8`.
    public var isLoopback: Bool { rawValue >> 24 == 127 }

    /// The dotted quad, e.g. `"127.0.0.1"`.
    public var description: String {
        let (a, b, c, d) = octets
        return "\(a).\(b).\(c).\(d)"
    }

    /// The address as a C `in_addr` (network byte order).
    var inAddr: in_addr { in_addr(s_addr: rawValue.bigEndian) }
}
