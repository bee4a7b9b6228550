import Foundation

/// What a test needs from the machine (root, network namespaces, a tmpfs mount, tcpdump, systemd-analyze), checked
/// one way everywhere.
///
/// Where the machine lacks it, a test skips, visibly (the test target cancels the test with the reason, so the run
/// reports it as skipped, never as passed); where FERRY_REQUIRE_NETNS=1 (CI, as root, with every package installed)
/// it fails instead, because a skip there means a promise went unchecked.
public enum Requirement {
    /// Whether the environment demands every privileged test to run (FERRY_REQUIRE_NETNS=1).
    public static var isDemanded: Bool {
        ProcessInfo.processInfo.environment["FERRY_REQUIRE_NETNS"] == "1"
    }

    /// True when `available`; otherwise throws `TestSupportError.requirementUnmet` when it is demanded, and returns
    /// false when the caller may skip (with `reason`).
    public static func check(_ what: String, available: Bool, reason: String) throws -> Bool {
        if available { return true }
        if isDemanded { throw TestSupportError.requirementUnmet(what: what, reason: reason) }
        return false
    }
}
