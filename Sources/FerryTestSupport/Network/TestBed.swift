import Foundation
import Glibc
import Synchronization

/// Several hosts on one machine: one network namespace per host, all on a bridge in a "switch"
/// namespace, the way users meet ferry on a LAN.
///
/// Why: discovery by multicast, many peers and slow links cannot be tested on loopback alone.
/// Layout, with nothing created in the root namespace:
///
///     <base>-sw:  br0 (bridge, no multicast snooping) ── p0, p1, ... (veth ends)
///     <base>-h<i>: lo, eth0 = veth peer of p<i>, 10.203.<bed>.<i+1>/24, route 224.0.0.0/4 dev eth0
///
/// where `<base>` is `ferry-<pid>-<counter>-<name>`, so `removeStale()` can tell a dead run's leftovers.
public final class TestBed: Sendable {
    /// Process-unique number of this bed; its third address octet is `index % 256`.
    public let index: Int
    /// Prefix of every namespace name of this bed.
    public let baseName: String
    /// The namespace holding the bridge.
    public let switchNamespace: String
    public let hosts: [TestHost]
    private let destroyed = Mutex(false)

    private static let counter = Atomic<Int>(0)

    private init(index: Int, baseName: String, hostCount: Int) {
        self.index = index
        self.baseName = baseName
        switchNamespace = baseName + "-sw"
        hosts = (0..<hostCount).map { number in
            TestHost(
                index: number, namespace: "\(baseName)-h\(number)", address: "10.203.\(index % 256).\(number + 1)",
                interface: "eth0", prefixLength: 24)
        }
    }

    deinit {
        destroy()
    }

    /// Builds a bed of `hosts` hosts (1...250); `name` (letters and digits) goes into namespace names.
    public static func create(hosts count: Int, name: String = "t") throws -> TestBed {
        precondition((1...250).contains(count), "a test bed has 1...250 hosts")
        let label = String(name.filter { $0.isASCII && ($0.isLetter || $0.isNumber) }.prefix(12))
        let index = counter.wrappingAdd(1, ordering: .relaxed).newValue
        let base = "ferry-\(getpid())-\(index)" + (label.isEmpty ? "" : "-\(label)")
        let bed = TestBed(index: index, baseName: base, hostCount: count)
        do {
            try bed.build()
        } catch {
            bed.destroy()
            throw error
        }
        return bed
    }

    /// Runs `body` with a new bed and destroys the bed afterwards, also when `body` throws.
    nonisolated(nonsending) public static func with<T>(
        hosts count: Int, name: String = "t", _ body: (TestBed) async throws -> T
    ) async throws -> T {
        let bed = try create(hosts: count, name: name)
        defer { bed.destroy() }
        return try await body(bed)
    }

    private func build() throws {
        try NetworkNamespace.batch(["netns add \(switchNamespace)"] + hosts.map { "netns add \($0.namespace)" })
        var switchCommands = [
            "link set lo up",
            "link add br0 type bridge forward_delay 0 mcast_snooping 0",
            "link set br0 up",
        ]
        for host in hosts {
            switchCommands += [
                "link add p\(host.index) type veth peer name h\(host.index)",
                "link set p\(host.index) master br0",
                "link set p\(host.index) up",
                "link set h\(host.index) netns \(host.namespace)",
            ]
        }
        try NetworkNamespace.batch(switchCommands, namespace: switchNamespace)
        for host in hosts {
            try NetworkNamespace.batch(
                [
                    "link set lo up",
                    "link set h\(host.index) name \(host.interface)",
                    "addr add \(host.address)/\(host.prefixLength) dev \(host.interface)",
                    "link set \(host.interface) up",
                    "route add 224.0.0.0/4 dev \(host.interface)",
                ], namespace: host.namespace)
        }
    }

    /// Kills every process left in the bed's namespaces and deletes them; idempotent.
    public func destroy() {
        let first = destroyed.withLock { done in
            defer { done = true }
            return !done
        }
        guard first else { return }
        NetworkNamespace.remove(hosts.map(\.namespace) + [switchNamespace])
    }

    /// Every namespace of this bed (hosts, then the switch).
    public var namespaces: [String] { hosts.map(\.namespace) + [switchNamespace] }
}
