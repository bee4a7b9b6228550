import FerrySystem

/// Which member addresses a swarm member dials, and how often (PROTOCOL.md 11.11 rule 4, SECURITY.md "Swarm
/// broadcast"). Pure: the driver gives it the sender's address, this member's own IPv4 networks and the time.
///
/// Why: the offer's addresses are the sender's word. Dialled as given, after every `swarmMembers`, they made every
/// member of a broadcast a connection scanner for the sender: up to 255 addresses of its choice, loopback and
/// link-local included, again and again. A member has reason to believe an address only on its own network, and on
/// loopback only when it is itself on loopback with the sender (then every member is on this host); it dials each
/// member a few times at most, with a growing pause.
///
/// The rule: an address is dialled when its port is not 0 and its family is the sender's address's, and
/// - IPv4: never `0.0.0.0`, a multicast or the limited broadcast address; a loopback one (`127.0.0.0/8`) only when
///   the sender's address is loopback, and then nothing else; otherwise it lies in the network of one of this
///   member's own non-loopback interfaces (address and prefix length), and is neither that network's address nor
///   its broadcast address (prefixes up to /30);
/// - IPv6: never `::` or a multicast; `::1` only when the sender's address is `::1`, and then nothing else; a
///   link-local one (`fe80::/10`) only when the sender's is link-local with the same scope (interface); otherwise
///   it shares the sender's /64 prefix.
///
/// And each member is dialled at most `maxAttempts` times per swarm, the second attempt at the earliest
/// `firstPause` after the first, each later one after twice the pause before (a new `swarmMembers` is what
/// brings a dial on).
struct SwarmDialPolicy: Sendable {
    /// An IPv4 network this member is on: one of its interfaces' addresses and its prefix length.
    struct Network: Hashable, Sendable {
        var address: IPv4Address
        var prefixLength: Int

        /// Whether `host` is in this network.
        func contains(_ host: IPv4Address) -> Bool {
            let mask = Self.mask(prefixLength)
            return host.rawValue & mask == address.rawValue & mask
        }

        /// Whether `host` is this network's own address or its broadcast address (for prefixes up to /30).
        func isNetworkOrBroadcast(_ host: IPv4Address) -> Bool {
            guard prefixLength <= 30 else { return false }
            let mask = Self.mask(prefixLength)
            return host.rawValue & ~mask == 0 || host.rawValue & ~mask == ~mask
        }

        static func mask(_ prefixLength: Int) -> UInt32 {
            prefixLength <= 0 ? 0 : prefixLength >= 32 ? .max : ~UInt32(0) << UInt32(32 - prefixLength)
        }
    }

    /// Dials of one member at most, per swarm.
    static let maxAttempts = 3
    /// The least pause between a member's first and second dial; each later pause is twice the one before.
    static let firstPause = Duration.seconds(30)

    /// The sender's address, as this member's link to it sees it (nil: unknown, and nothing is dialled).
    let sender: SocketAddress?
    /// This member's own IPv4 networks, loopback interfaces left out.
    let networks: [Network]

    /// A policy for a member whose link to the sender has `sender` at its other end, on `networks`.
    init(sender: SocketAddress?, networks: [Network]) {
        self.sender = sender
        self.networks = networks
    }

    /// A policy for a member whose link to the sender has `sender` at its other end, on the networks of this host's
    /// interfaces that are up (`getifaddrs(3)`); none when they cannot be listed.
    static func ofThisHost(sender: SocketAddress?) -> SwarmDialPolicy {
        let interfaces = (try? NetworkInterface.all()) ?? []
        let networks = interfaces.compactMap { interface -> Network? in
            guard interface.isUp, !interface.isLoopback, let address = interface.ipv4,
                let prefixLength = interface.ipv4PrefixLength
            else { return nil }
            return Network(address: address, prefixLength: prefixLength)
        }
        return SwarmDialPolicy(sender: sender, networks: networks)
    }

    /// Whether this member may dial `address` at all.
    func allows(_ address: SocketAddress) -> Bool {
        guard address.port != 0, let sender else { return false }
        switch (address, sender) {
        case (.ipv4(let host, _), .ipv4(let senderHost, _)):
            guard host != .any, !host.isMulticast, host.rawValue != .max else { return false }
            if senderHost.isLoopback { return host.isLoopback }
            guard !host.isLoopback else { return false }
            return networks.contains { $0.contains(host) && !$0.isNetworkOrBroadcast(host) }
        case (.ipv6(let host, _, let scope), .ipv6(let senderHost, _, let senderScope)):
            guard host != .any, host.high >> 56 != 0xFF else { return false }
            if senderHost == .loopback { return host == .loopback }
            guard host != .loopback else { return false }
            let linkLocal = host.high >> 54 == 0x3FA  // fe80::/10
            let senderLinkLocal = senderHost.high >> 54 == 0x3FA
            if linkLocal || senderLinkLocal { return linkLocal && senderLinkLocal && scope == senderScope }
            return host.high == senderHost.high
        default:
            return false
        }
    }

    /// Whether a member dialled `attempts` times already, the last at `last`, may be dialled again at `now`.
    static func mayDial(attempts: Int, last: ContinuousClock.Instant?, now: ContinuousClock.Instant) -> Bool {
        guard attempts > 0, let last else { return attempts == 0 }
        guard attempts < maxAttempts else { return false }
        return now - last >= firstPause * (1 << (attempts - 1))
    }
}
