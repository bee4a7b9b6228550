/// What a `DirectoryWatcher` saw in its directory.
///
/// Why: callers (`ferry watch`) only care whether a complete file appeared, whether they missed events and must
/// rescan, or whether the directory is gone; inotify's dozen mask bits are reduced to those three.
public enum WatchEvent: Equatable, Sendable {
    /// A file was closed after writing (IN_CLOSE_WRITE) or moved into the directory (IN_MOVED_TO). `name` is one
    /// component, relative to the watched directory. A file written twice is reported twice.
    case fileReady(name: String)
    /// The kernel's event queue overflowed (IN_Q_OVERFLOW): events were lost, rescan the directory.
    case overflow
    /// The directory was deleted, moved away or unmounted (IN_DELETE_SELF, IN_MOVE_SELF, IN_UNMOUNT, IN_IGNORED); the
    /// watcher is closed. While some process holds the directory open, a deletion is not reported until it closes it.
    case gone
}
