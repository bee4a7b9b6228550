import Foundation
import Glibc

extension TestBed {
    /// Whether this machine can build test beds, and if not, why.
    public static var isAvailable: (available: Bool, reason: String) { availability }

    private static let availability: (available: Bool, reason: String) = probe()

    /// True when test beds work; false when not (the caller skips with `isAvailable.reason`).
    ///
    /// Throws instead when the environment sets FERRY_REQUIRE_NETNS=1 (CI runs as root and
    /// must not skip these tests silently).
    public static func requireAvailability() throws -> Bool {
        try Requirement.check("network namespaces", available: isAvailable.available, reason: isAvailable.reason)
    }

    /// Deletes namespaces `ferry-<pid>-*` left by test runs whose process is gone.
    public static func removeStale() {
        let stale = NetworkNamespace.list().filter { name in
            let parts = name.split(separator: "-")
            guard parts.count >= 3, parts[0] == "ferry", let pid = Int32(parts[1]), pid > 0 else { return false }
            return pid != getpid() && kill(pid, 0) != 0 && errno == ESRCH
        }
        if !stale.isEmpty { NetworkNamespace.remove(stale) }
    }

    private static func probe() -> (available: Bool, reason: String) {
        guard getuid() == 0 else {
            return (false, "network-namespace tests need root (uid is \(getuid())); CI runs them as root")
        }
        guard ExecutableSearch.path(of: "ip") != nil else {
            return (false, "the `ip` command is missing (install iproute2)")
        }
        let name = "ferry-\(getpid())-probe"
        do {
            try NetworkNamespace.batch(["netns add \(name)"])
            defer { NetworkNamespace.remove([name]) }
            try NetworkNamespace.batch(
                [
                    "link add br0 type bridge",
                    "link add v0 type veth peer name v1",
                    "link set v0 master br0",
                ], namespace: name)
        } catch {
            return (false, "cannot create network namespaces, bridges or veth pairs: \(error)")
        }
        return (true, "network namespaces, bridges and veth pairs work")
    }
}
