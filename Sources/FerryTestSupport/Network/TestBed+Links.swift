import Foundation

/// Bytes and packets that crossed one host's link, seen from the host.
///
/// Why: a benchmark of a broadcast must say how many copies the sender's link carried, not only how long it took;
/// the kernel's veth counters count every byte that really moved (TCP/IP and TLS overhead included, retransmissions
/// too), whatever the programs at either end believe they sent.
public struct LinkCounters: Sendable, Equatable {
    /// Bytes the host sent onto its link (Ethernet frames: headers included).
    public var sentBytes: Int
    /// Bytes the host received from its link.
    public var receivedBytes: Int
    /// Frames the host sent, and received.
    public var sentPackets: Int
    public var receivedPackets: Int

    public init(sentBytes: Int, receivedBytes: Int, sentPackets: Int, receivedPackets: Int) {
        self.sentBytes = sentBytes
        self.receivedBytes = receivedBytes
        self.sentPackets = sentPackets
        self.receivedPackets = receivedPackets
    }

    /// What moved between two readings (`later - earlier`).
    public static func - (later: LinkCounters, earlier: LinkCounters) -> LinkCounters {
        LinkCounters(
            sentBytes: later.sentBytes - earlier.sentBytes, receivedBytes: later.receivedBytes - earlier.receivedBytes,
            sentPackets: later.sentPackets - earlier.sentPackets,
            receivedPackets: later.receivedPackets - earlier.receivedPackets)
    }
}

extension TestBed {
    /// Shapes `host`'s link to `mbit` both ways, like a switch port of that speed: a token bucket on the host's
    /// `eth0` (what it sends) and one on the bridge port `p<i>` facing it (what it receives).
    public func limitRateBothWays(
        host: TestHost, mbit: Int, burstKiB: Int, latency: Duration = .milliseconds(400)
    ) throws {
        for direction in [LinkDirection.outgoing, .incoming] {
            try limitRate(host: host, mbit: mbit, burstKiB: burstKiB, latency: latency, direction: direction)
        }
    }

    /// Shapes every host's link to `mbit` both ways (`limitRateBothWays` for each host).
    public func limitEveryLink(mbit: Int, burstKiB: Int, latency: Duration = .milliseconds(400)) throws {
        for host in hosts {
            try limitRateBothWays(host: host, mbit: mbit, burstKiB: burstKiB, latency: latency)
        }
    }

    /// Every host's link counters, read from the bridge ports (one `ip -s -j link show` in the switch namespace):
    /// what port `p<i>` received, host `i` sent, and the other way round.
    public func linkCounters() throws -> [TestHost: LinkCounters] {
        let ports = try Self.readCounters(namespace: switchNamespace, device: nil)
        var counters: [TestHost: LinkCounters] = [:]
        for host in hosts {
            guard let port = ports["p\(host.index)"] else {
                throw TestSupportError.unexpectedOutput(
                    command: "ip -s -j link show (in \(switchNamespace))", detail: "no counters for p\(host.index)")
            }
            counters[host] = LinkCounters(
                sentBytes: port.receivedBytes, receivedBytes: port.sentBytes, sentPackets: port.receivedPackets,
                receivedPackets: port.sentPackets)
        }
        return counters
    }

    /// `host`'s link counters read from its own `eth0`, inside its namespace.
    public func hostLinkCounters(_ host: TestHost) throws -> LinkCounters {
        guard let counters = try Self.readCounters(namespace: host.namespace, device: host.interface)[host.interface]
        else {
            throw TestSupportError.unexpectedOutput(
                command: "ip -s -j link show dev \(host.interface) (in \(host.namespace))",
                detail: "no counters for \(host.interface)")
        }
        return counters
    }

    /// The tbf qdisc lines of `host`'s link, both ends: (`tc qdisc show dev eth0` in the host, `dev p<i>` in the
    /// switch), for checking what a test set up.
    public func queueingDisciplines(of host: TestHost) throws -> (outgoing: String, incoming: String) {
        guard let tc = ExecutableSearch.path(of: "tc") else {
            throw TestSupportError.binaryNotFound(
                name: "tc (package iproute2)", searched: ["PATH", "/usr/sbin", "/sbin"])
        }
        let outgoing = try FerryProcess.run(
            tc, ["qdisc", "show", "dev", host.interface], namespace: host.namespace
        ).requireSuccess()
        let incoming = try FerryProcess.run(
            tc, ["qdisc", "show", "dev", "p\(host.index)"], namespace: switchNamespace
        ).requireSuccess()
        return (outgoing.stdout, incoming.stdout)
    }

    /// Counters by interface name from `ip -s -j link show [dev DEVICE]` in `namespace`, as that interface sees them
    /// (sent = its tx).
    private static func readCounters(namespace: String, device: String?) throws -> [String: LinkCounters] {
        let command = ["-s", "-j", "link", "show"] + (device.map { ["dev", $0] } ?? [])
        let result = try NetworkNamespace.ip(command, namespace: namespace).requireSuccess()
        guard let links = try? JSONSerialization.jsonObject(with: Data(result.stdout.utf8)) as? [[String: Any]] else {
            throw TestSupportError.unexpectedOutput(
                command: "ip " + command.joined(separator: " "),
                detail: "not a JSON array: \(result.stdout.prefix(200))")
        }
        var counters: [String: LinkCounters] = [:]
        for link in links {
            guard let name = link["ifname"] as? String, let stats = link["stats64"] as? [String: Any],
                let tx = stats["tx"] as? [String: Any], let rx = stats["rx"] as? [String: Any]
            else { continue }
            func number(_ object: [String: Any], _ key: String) -> Int { (object[key] as? NSNumber)?.intValue ?? 0 }
            counters[name] = LinkCounters(
                sentBytes: number(tx, "bytes"), receivedBytes: number(rx, "bytes"), sentPackets: number(tx, "packets"),
                receivedPackets: number(rx, "packets"))
        }
        return counters
    }
}
