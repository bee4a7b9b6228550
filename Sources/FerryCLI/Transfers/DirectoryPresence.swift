import Foundation

#if canImport(Glibc)
    import Glibc
#endif

/// Notices that a directory a long-running command uses (the receive directory, the watched directory) is no
/// longer there: removed, moved away, replaced by another one, or unmounted.
///
/// Why not inotify alone: while a process holds the directory open (the transfer engine and `ferry watch` both
/// do), `rm -rf` does not deliver IN_DELETE_SELF until the last descriptor closes, which is never; the process
/// would keep running and fail every later file. So the path is checked against the directory's identity (device
/// and inode, taken at the start) every `interval`: a removed path, another directory at the path (recreated, or
/// the mount point left behind by an unmount) and a moved directory all differ.
struct DirectoryPresence: Sendable {
    /// The path as the user named it (absolute).
    let path: String
    private let device: UInt64
    private let inode: UInt64

    /// How often `watch` checks.
    static let interval = Duration.seconds(1)

    /// Remembers the identity of the directory at `path`; nil when there is none.
    init?(path: String) {
        guard let identity = Self.identity(of: path) else { return nil }
        self.path = path
        (device, inode) = identity
    }

    /// Why the directory is gone, or nil while `path` still names it.
    func loss() -> String? {
        guard let now = Self.identity(of: path) else {
            return "\(path) was removed (or moved away)"
        }
        if now != (device, inode) {
            return "\(path) is no longer the directory it was (it was removed and made again, moved, or unmounted)"
        }
        return nil
    }

    /// Checks every `interval` until the directory is gone; returns why, or nil when cancelled first.
    func waitForLoss() async -> String? {
        while !Task.isCancelled {
            if let reason = loss() {
                return reason
            }
            try? await Task.sleep(for: Self.interval)
        }
        return nil
    }

    /// Checks in a task until the directory is gone, then calls `onLoss` once with the reason; cancel the returned
    /// task to stop checking.
    func watch(onLoss: @escaping @Sendable (String) async -> Void) -> Task<Void, Never> {
        Task {
            if let reason = await waitForLoss() {
                await onLoss(reason)
            }
        }
    }

    /// `stat(2)` of `path`: its device and inode when it is a directory.
    private static func identity(of path: String) -> (UInt64, UInt64)? {
        var status = stat()
        guard stat(path, &status) == 0, status.st_mode & S_IFMT == S_IFDIR else { return nil }
        return (UInt64(status.st_dev), UInt64(status.st_ino))
    }
}
