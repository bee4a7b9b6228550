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
    /// Last status change (`st_ctim`): the kernel sets it to the current time on every write and every change of
    /// metadata, and unlike the modification time no program can set it back. So a file rewritten in place with
    /// its modification time put back (`dd conv=notrunc`, then `touch -d`) still shows a new change time. Limits:
    /// writes through a shared memory mapping (`mmap`) may change neither time, and on a kernel that stamps files
    /// with its coarse clock two changes within one clock tick (a few milliseconds) can share one change time.
    public var changeTime: FileTimestamp

    /// A status with the given fields (for tests and callers that build one).
    public init(
        size: UInt64, permissions: UInt16, kind: Kind, modificationTime: FileTimestamp, device: UInt64, inode: UInt64,
        changeTime: FileTimestamp = FileTimestamp(seconds: 0, nanoseconds: 0)
    ) {
        self.size = size
        self.permissions = permissions
        self.kind = kind
        self.modificationTime = modificationTime
        self.device = device
        self.inode = inode
        self.changeTime = changeTime
    }

    /// Whether this status shows the file `earlier` showed, unchanged: the same file (device and inode), size,
    /// modification time and change time. False as soon as anything was written to it, its metadata changed, or
    /// another file took its name (see `changeTime` for what this cannot see).
    public func isUnchanged(since earlier: FileStatus) -> Bool {
        device == earlier.device && inode == earlier.inode && size == earlier.size
            && modificationTime == earlier.modificationTime && changeTime == earlier.changeTime
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
            inode: UInt64(buffer.st_ino),
            changeTime: FileTimestamp(
                seconds: Int64(buffer.st_ctim.tv_sec), nanoseconds: UInt32(clamping: buffer.st_ctim.tv_nsec)))
    }
}
