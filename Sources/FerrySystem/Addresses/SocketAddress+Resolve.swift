import CFerryLinux
import Glibc

extension SocketAddress {
    /// Parses `"1.2.3.4:5"`, `"[::1]:5"`, `"[fe80::1%eth0]:5"` or `"host:5"`; with `defaultPort`, also a bare
    /// host (`"1.2.3.4"`, `"::1"`, `"[::1]"`, `"host"`).
    ///
    /// Host names are resolved with `getaddrinfo(3)`, which blocks (it may ask DNS): call it off the reactor,
    /// before connecting. IPv4 results are preferred over IPv6.
    /// - Throws: `AddressError` for bad syntax, a bad port or an unknown host.
    public static func resolve(_ hostAndPort: String, defaultPort: UInt16? = nil) throws -> SocketAddress {
        let expected = defaultPort == nil ? "HOST:PORT" : "HOST[:PORT]"
        let (host, portText) = try split(hostAndPort, expected: expected)
        let port: UInt16
        if let portText {
            guard !portText.isEmpty, portText.utf8.allSatisfy({ $0 >= 0x30 && $0 <= 0x39 }),
                let value = UInt16(portText)
            else { throw AddressError.invalidPort(input: hostAndPort) }
            port = value
        } else if let defaultPort {
            port = defaultPort
        } else {
            throw AddressError.invalidSyntax(input: hostAndPort, expected: expected)
        }
        guard !host.isEmpty, !host.utf8.contains(where: { $0 <= 0x20 || $0 == 0x7F }) else {
            throw AddressError.invalidSyntax(input: hostAndPort, expected: expected)
        }
        if let ipv4 = IPv4Address(host) { return .ipv4(ipv4, port: port) }
        if let ipv6 = IPv6Address(host) { return .ipv6(ipv6, port: port, scopeID: 0) }
        return try lookUp(host, port: port)
    }

    /// Splits into host and optional port text, removing IPv6 brackets.
    private static func split(_ text: String, expected: String) throws -> (host: String, port: String?) {
        if text.hasPrefix("[") {
            guard let close = text.firstIndex(of: "]") else {
                throw AddressError.invalidSyntax(input: text, expected: expected)
            }
            let host = String(text[text.index(after: text.startIndex)..<close])
            let rest = text[text.index(after: close)...]
            if rest.isEmpty { return (host, nil) }
            guard rest.hasPrefix(":") else { throw AddressError.invalidSyntax(input: text, expected: expected) }
            return (host, String(rest.dropFirst()))
        }
        let colons = text.filter { $0 == ":" }.count
        if colons == 0 { return (text, nil) }
        if colons > 1 { return (text, nil) }  // a bare IPv6 literal such as "::1"
        guard let colon = text.firstIndex(of: ":") else { return (text, nil) }
        return (String(text[..<colon]), String(text[text.index(after: colon)...]))
    }

    /// Resolves a host name (or a scoped IPv6 literal) with `getaddrinfo(3)`, preferring IPv4.
    private static func lookUp(_ host: String, port: UInt16) throws -> SocketAddress {
        var hints = addrinfo()
        hints.ai_family = AF_UNSPEC
        hints.ai_socktype = FERRY_SOCK_STREAM
        var list: UnsafeMutablePointer<addrinfo>?
        let status = getaddrinfo(host, nil, &hints, &list)
        guard status == 0 else {
            let reason = gai_strerror(status).map { String(cString: $0) } ?? "error \(status)"
            throw AddressError.unknownHost(host: host, reason: reason)
        }
        defer { freeaddrinfo(list) }
        var firstIPv6: SocketAddress?
        var entry = list
        while let current = entry {
            if let pointer = current.pointee.ai_addr,
                let address = SocketAddress(UnsafeRawPointer(pointer), length: current.pointee.ai_addrlen)
            {
                if case .ipv4 = address { return address.withPort(port) }
                if firstIPv6 == nil { firstIPv6 = address.withPort(port) }
            }
            entry = current.pointee.ai_next
        }
        guard let firstIPv6 else {
            throw AddressError.unknownHost(host: host, reason: "no IPv4 or IPv6 address")
        }
        return firstIPv6
    }
}
