import Foundation
import Glibc
import Synchronization

/// A tmpfs of a fixed size mounted on a new temporary directory, unmounted when dropped.
///
/// Why: "the disk is full" must be testable without filling the machine's disk; a small tmpfs gives
/// a receive directory that runs out of space at a known size, and is gone when the test ends.
/// Mounting needs root (CI runs as root); tests skip with `availabilityReason` elsewhere, unless
/// FERRY_REQUIRE_NETNS=1 demands that every privileged test runs (see `requireAvailability()`).
public final class TmpfsMount: Sendable {
    /// The mount point: a fresh directory under the system temporary directory.
    public let url: URL
    /// The size limit of the file system in bytes.
    public let size: Int
    private let mounted = Mutex(true)

    /// The mount point's path.
    public var path: String { url.path }

    /// Mounts a tmpfs of `size` bytes (`mount -t tmpfs -o size=N,mode=0755 tmpfs DIR`) on a new directory.
    public init(size: Int, prefix: String = "ferry-tmpfs") throws {
        precondition(size > 0, "a tmpfs needs a positive size")
        let directory = try TemporaryDirectory(prefix: prefix)
        do {
            try Self.mount(size: size, at: directory.path)
        } catch {
            _ = rmdir(directory.path)
            throw error
        }
        url = directory.url
        self.size = size
    }

    deinit {
        unmount()
    }

    /// Unmounts the file system (lazily with `umount -l` if it is busy) and removes the directory; idempotent.
    public func unmount() {
        let first = mounted.withLock { isMounted in
            defer { isMounted = false }
            return isMounted
        }
        guard first else { return }
        let umount = ExecutableSearch.path(of: "umount") ?? "umount"
        let plain = try? FerryProcess.run(umount, [path], timeout: .seconds(30))
        if plain?.status != 0 {
            _ = try? FerryProcess.run(umount, ["-l", path], timeout: .seconds(30))
        }
        _ = rmdir(path)
    }

    /// True when this machine can mount a tmpfs (root, and `mount` works); else see `availabilityReason`.
    public static var isAvailable: Bool { availability.available }

    /// Why tmpfs mounts are, or are not, available here.
    public static var availabilityReason: String { availability.reason }

    /// True when tmpfs mounts work; false when not (the caller skips with `availabilityReason`).
    ///
    /// Throws instead when the environment sets FERRY_REQUIRE_NETNS=1: CI runs as root and must not
    /// skip privileged tests silently.
    public static func requireAvailability() throws -> Bool {
        try Requirement.check("a tmpfs mount", available: isAvailable, reason: availabilityReason)
    }

    private static let availability: (available: Bool, reason: String) = probe()

    private static func probe() -> (available: Bool, reason: String) {
        guard getuid() == 0 else {
            return (false, "mounting a tmpfs needs root (uid is \(getuid())); CI runs these tests as root")
        }
        guard ExecutableSearch.path(of: "mount") != nil, ExecutableSearch.path(of: "umount") != nil else {
            return (false, "the `mount` or `umount` command is missing (install mount)")
        }
        do {
            let probe = try TmpfsMount(size: 1 << 20, prefix: "ferry-tmpfs-probe")
            probe.unmount()
        } catch {
            return (false, "cannot mount a tmpfs: \(error)")
        }
        return (true, "tmpfs mounts work")
    }

    private static func mount(size: Int, at path: String) throws {
        guard let mount = ExecutableSearch.path(of: "mount") else {
            throw TestSupportError.binaryNotFound(
                name: "mount (package mount)", searched: ["PATH", "/usr/bin", "/bin"])
        }
        try FerryProcess.run(
            mount, ["-t", "tmpfs", "-o", "size=\(size),mode=0755", "tmpfs", path], timeout: .seconds(30)
        ).requireSuccess()
    }
}
