import FerrySystem

/// What `ferry watch` has already seen in its directory, so that each version of a file is sent once.
///
/// A file is known by its name, size and modification time: the same file reported twice (closed after writing,
/// then moved, or found again by a rescan after an overflow) is sent once, while a file written again with new
/// content is sent again. Files present at start are remembered without being sent. Kept in memory only: a
/// restarted watch starts from what is in the directory then.
public struct WatchedFiles: Sendable, Equatable {
    /// One version of one file.
    public struct Version: Hashable, Sendable {
        /// The file's name in the watched directory (no path; subdirectories are not watched).
        public var name: String
        /// Its size in bytes.
        public var size: UInt64
        /// Its modification time, as the file system reports it.
        public var modified: FileTimestamp

        /// One version of the file `name`.
        public init(name: String, size: UInt64, modified: FileTimestamp) {
            self.name = name
            self.size = size
            self.modified = modified
        }
    }

    private var seen: Set<Version> = []

    /// Nothing seen yet.
    public init() {}

    /// Remembers `version` without sending it (files there at start).
    public mutating func remember(_ version: Version) {
        seen.insert(version)
    }

    /// Whether `version` should be sent now: a regular file, not skipped by `WatchFilter`, not seen before. A
    /// version admitted once is never admitted again.
    public mutating func admit(_ version: Version, kind: FileStatus.Kind) -> Bool {
        guard kind == .regular, !WatchFilter.isSkipped(version.name) else {
            return false
        }
        return seen.insert(version).inserted
    }

    /// How many versions are remembered.
    public var count: Int {
        seen.count
    }
}
