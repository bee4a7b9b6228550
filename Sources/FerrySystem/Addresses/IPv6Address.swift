import Glibc

/// An IPv6 address: 16 bytes, held as two 64-bit halves in host order.
///
/// Why: a hashable value type over `in6_addr` (whose C tuple cannot be compared or hashed in Swift);
/// parsing and printing go through `inet_pton`/`inet_ntop`, so the text form is the canonical one (`"::1"`).
public struct IPv6Address: Hashable, Sendable, CustomStringConvertible {
    /// Bytes 0..<8, most significant first.
    public var high: UInt64
    /// Bytes 8..<16, most significant first.
    public var low: UInt64

    /// The address with the given halves.
    public init(high: UInt64, low: UInt64) {
        self.high = high
        self.low = low
    }

    /// The address made of exactly 16 bytes; nil for any other count.
    public init?(bytes: [UInt8]) {
        guard bytes.count == 16 else { return nil }
        var high: UInt64 = 0
        var low: UInt64 = 0
        for index in 0..<8 {
            high = high << 8 | UInt64(bytes[index])
            low = low << 8 | UInt64(bytes[index + 8])
        }
        self.init(high: high, low: low)
    }

    /// Parses a textual IPv6 address such as `"fe80::1"` (`inet_pton(3)`, AF_INET6); nil for anything else.
    /// A zone suffix (`%eth0`) is not part of an address: see `SocketAddress.resolve`.
    public init?(_ string: String) {
        var address = in6_addr()
        guard inet_pton(AF_INET6, string, &address) == 1 else { return nil }
        self.init(address)
    }

    /// `::`, every local address (for binding).
    public static let any = IPv6Address(high: 0, low: 0)
    /// `::1`.
    public static let loopback = IPv6Address(high: 0, low: 1)

    /// The 16 bytes, most significant first.
    public var bytes: [UInt8] {
        var result = [UInt8](repeating: 0, count: 16)
        for index in 0..<8 {
            result[index] = UInt8(truncatingIfNeeded: high >> (56 - 8 * UInt64(index)))
            result[index + 8] = UInt8(truncatingIfNeeded: low >> (56 - 8 * UInt64(index)))
        }
        return result
    }

    /// The canonical text form (`inet_ntop(3)`), e.g. `"::1"`, `"fe80::1"`.
    public var description: String {
        var address = in6Addr
        var buffer = [CChar](repeating: 0, count: Int(INET6_ADDRSTRLEN))
        guard inet_ntop(AF_INET6, &address, &buffer, socklen_t(buffer.count)) != nil else {
            return bytes.map { String($0, radix: 16) }.joined(separator: ":")
        }
        return String(decoding: buffer.prefix { $0 != 0 }.map { UInt8(bitPattern: $0) }, as: UTF8.self)
    }

    /// Reads a C `in6_addr` (network byte order).
    init(_ address: in6_addr) {
        var high: UInt64 = 0
        var low: UInt64 = 0
        withUnsafeBytes(of: address) { raw in
            for index in 0..<8 {
                high = high << 8 | UInt64(raw[index])
                low = low << 8 | UInt64(raw[index + 8])
            }
        }
        self.init(high: high, low: low)
    }

    /// The address as a C `in6_addr` (network byte order).
    var in6Addr: in6_addr {
        var address = in6_addr()
        let bytes = self.bytes
        withUnsafeMutableBytes(of: &address) { raw in
            raw.copyBytes(from: bytes)
        }
        return address
    }
}
