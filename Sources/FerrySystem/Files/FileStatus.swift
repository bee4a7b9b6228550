import Glibc

/// What `fstat`/`fstatat` report about a file, reduced to what ferry uses.
///
/// Why: the transfer engine needs sizes, permissions and modification times to offer and restore files, the
/// kind to refuse symlinks and special files, and device + inode to recognise the same file under two names;
/// a small value type keeps `struct stat` (and Glibc) out of the layers above.
public struct FileStatus: Sendable, Equatable {
    /// The kind of file, from the `S_IFMT` bits.
    public enum Kind: Sendable, Equatable {
        case regular
        case directory
        case symlink
        /// A FIFO, socket or device.
        case other
    }

    /// Size in bytes (`st_size`).
    public var size: UInt64
    /// Permission bits, `st_mode & 0o7777` (including setuid, setgid and sticky).
    public var permissions: UInt16
    /// The kind of file.
    public var kind: Kind
    /// Last modification (`st_mtim`).
    public var modificationTime: FileTimestamp
    /// The device holding the file (`st_dev`).
    public var device: UInt64
    /// The inode number (`st_ino`).
    public var inode: UInt64

    /// A status with the given fields (for tests and callers that build one).
    public init(
        size: UInt64, permissions: UInt16, kind: Kind, modificationTime: FileTimestamp, device: UInt64, inode: UInt64
    ) {
        self.size = size
        self.permissions = permissions
        self.kind = kind
        self.modificationTime = modificationTime
        self.device = device
        self.inode = inode
    }

    /// The fields of a `struct stat` filled by the kernel.
    init(_ buffer: stat) {
        let kind: Kind
        switch buffer.st_mode & S_IFMT {
        case S_IFREG: kind = .regular
        case S_IFDIR: kind = .directory
        case S_IFLNK: kind = .symlink
        default: kind = .other
        }
        self.init(
            size: UInt64(clamping: buffer.st_size),
            permissions: UInt16(truncatingIfNeeded: buffer.st_mode & 0o7777),
            kind: kind,
            modificationTime: FileTimestamp(
                seconds: Int64(buffer.st_mtim.tv_sec),
                nanoseconds: UInt32(clamping: buffer.st_mtim.tv_nsec)),
            device: UInt64(buffer.st_dev),
            inode: UInt64(buffer.st_ino))
    }
}
