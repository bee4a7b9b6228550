import Foundation
import Glibc

/// Every entry under a directory, hidden ones included, with its kind and size, as of one moment.
///
/// Why: a receiver must touch nothing but the files it publishes; comparing snapshots taken before and
/// after a transfer ("exactly these two files appeared, nothing else") catches stray temporary files,
/// leftovers of a failed transfer and names that escaped the directory. Entries are read with
/// `openat`/`fstatat` without following symbolic links, so any name the kernel accepts is listed
/// (a name that is not UTF-8 shows with replacement characters).
public struct DirectorySnapshot: Sendable, Equatable, CustomStringConvertible {
    /// What an entry is; symbolic links are never followed.
    public enum Kind: Sendable, Hashable {
        case file
        case directory
        case symbolicLink
        case other
    }

    /// One entry: its path relative to the root ("a/b.txt"), kind and size in bytes (0 for directories).
    public struct Entry: Sendable, Hashable, CustomStringConvertible {
        public var path: String
        public var kind: Kind
        public var size: Int

        public init(path: String, kind: Kind, size: Int) {
            self.path = path
            self.kind = kind
            self.size = size
        }

        public var description: String {
            switch kind {
            case .file: return "\(path) (\(size) bytes)"
            case .directory: return "\(path)/"
            case .symbolicLink: return "\(path) -> (symbolic link)"
            case .other: return "\(path) (special file)"
            }
        }
    }

    /// The directory the snapshot was taken of.
    public let root: URL
    /// Every entry below the root (not the root itself), sorted by path.
    public let entries: [Entry]

    /// Takes a snapshot of everything below `directory`.
    public init(of directory: URL) throws {
        root = directory
        let fd = open(directory.path, O_RDONLY | O_DIRECTORY | O_CLOEXEC)
        guard fd >= 0 else { throw TestSupportError.systemCall("open(\(directory.path))", errno: errno) }
        var found: [Entry] = []
        try Self.walk(fd, prefix: "", into: &found)  // takes ownership of fd
        entries = found.sorted { $0.path < $1.path }
    }

    /// The relative paths of every entry, sorted.
    public var paths: [String] { entries.map(\.path) }

    /// The entry at a relative path, if any.
    public subscript(path: String) -> Entry? {
        entries.first { $0.path == path }
    }

    /// Entries present now but not in `earlier` (by path).
    public func added(since earlier: DirectorySnapshot) -> [Entry] {
        let before = Set(earlier.paths)
        return entries.filter { !before.contains($0.path) }
    }

    /// Entries of `earlier` that are gone now (by path).
    public func removed(since earlier: DirectorySnapshot) -> [Entry] {
        let now = Set(paths)
        return earlier.entries.filter { !now.contains($0.path) }
    }

    /// Entries whose path existed in `earlier` but whose kind or size changed (as they are now).
    public func changed(since earlier: DirectorySnapshot) -> [Entry] {
        let before = Dictionary(earlier.entries.map { ($0.path, $0) }, uniquingKeysWith: { first, _ in first })
        return entries.filter { entry in before[entry.path].map { $0 != entry } ?? false }
    }

    public var description: String {
        entries.isEmpty
            ? "\(root.path): empty" : "\(root.path):\n" + entries.map { "  " + $0.description }.joined(separator: "\n")
    }

    /// Lists the directory open as `fd` (and closes it), descending into subdirectories.
    private static func walk(_ fd: Int32, prefix: String, into found: inout [Entry]) throws {
        guard let stream = fdopendir(fd) else {
            let saved = errno
            Descriptor.close(fd)
            throw TestSupportError.systemCall("fdopendir(\(prefix.isEmpty ? "." : prefix))", errno: saved)
        }
        defer { closedir(stream) }
        var subdirectories: [(name: [CChar], path: String)] = []
        while true {
            errno = 0
            guard let item = readdir(stream) else {
                if errno != 0 { throw TestSupportError.systemCall("readdir(\(prefix))", errno: errno) }
                break
            }
            let name: [CChar] = withUnsafeBytes(of: item.pointee.d_name) { raw in
                Array(raw.bindMemory(to: CChar.self).prefix { $0 != 0 }) + [0]
            }
            let display = String(decoding: name.dropLast().map { UInt8(bitPattern: $0) }, as: UTF8.self)
            if display == "." || display == ".." { continue }
            var info = stat()
            guard fstatat(fd, name, &info, AT_SYMLINK_NOFOLLOW) == 0 else {
                throw TestSupportError.systemCall("fstatat(\(prefix + display))", errno: errno)
            }
            let path = prefix + display
            switch info.st_mode & S_IFMT {
            case S_IFREG:
                found.append(Entry(path: path, kind: .file, size: Int(info.st_size)))
            case S_IFDIR:
                found.append(Entry(path: path, kind: .directory, size: 0))
                subdirectories.append((name, path))
            case S_IFLNK:
                found.append(Entry(path: path, kind: .symbolicLink, size: Int(info.st_size)))
            default:
                found.append(Entry(path: path, kind: .other, size: 0))
            }
        }
        for subdirectory in subdirectories {
            let child = openat(fd, subdirectory.name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC)
            guard child >= 0 else {
                throw TestSupportError.systemCall("openat(\(subdirectory.path))", errno: errno)
            }
            try walk(child, prefix: subdirectory.path + "/", into: &found)
        }
    }
}
