import CFerryLinux
import Glibc

/// Creating a file whose inode is made before it has a name (O_TMPFILE), then linked under the name.
///
/// Why: creating a file by name holds its directory's lock while the file system allocates the inode, so creations
/// in one directory run one at a time. On the development machine's ext4 (no journal) each allocation first scans
/// past every inode deleted in the last minute, 1-1.5 ms a file after another program's files were removed, and a
/// receiver of many small files created its staged files one after another at that pace. An O_TMPFILE open takes
/// no directory lock, so several threads allocate inodes in one directory at once; only the `linkat` that names the
/// file takes the lock, briefly.
extension DirectoryHandle {
    /// What `createLockedLinkedFile(_:permissions:)` did.
    public enum LockedCreation: Sendable {
        /// The new, empty file, now named `name`: `writable` open for reading and writing, `lock` a read-only
        /// descriptor of its own (another open file) holding an exclusive `flock` taken before the file had a name.
        case created(writable: RegularFile, lock: RegularFile)
        /// `name` was taken already (nothing was created).
        case exists
        /// The file system, a missing /proc or a policy does not allow it: create the file by name instead.
        case unsupported
    }

    /// Creates a new empty regular file (mode `permissions` minus the umask) without a name in this directory, locks
    /// it, then links it as `name` (`openat(2)` with O_TMPFILE, `linkat(2)` through /proc/self/fd, never replacing).
    /// The lock: the new file is opened a second time, read-only, through /proc/self/fd (so that descriptor is the new
    /// file itself, whatever names the directory holds), locked with `flock(2)` (LOCK_EX | LOCK_NB) through it, and
    /// only then linked as `name`: the name never holds the file unlocked, so no other open of the name can take the
    /// lock first, and no check of the name after locking is needed. Both descriptors' status is the one `fstat` of the
    /// new file (same inode).
    ///
    /// Why: a receiver creates, links and locks a staged file for every file it receives; locking by name afterwards
    /// (open by name, `fstat`, `fcntl`, `flock`, and a `stat` of the name to check it still holds the locked file)
    /// cost five system calls a file where this costs two.
    /// - Throws: `SystemError` for other failures (EINVAL for a name that is not one component, ENOSPC, EACCES).
    public func createLockedLinkedFile(_ name: String, permissions: UInt16) throws(SystemError) -> LockedCreation {
        try checkComponent(name, "linkat")
        let describeOpen = describe("openat(O_TMPFILE)", ".")
        return try descriptor.withDescriptor(describeOpen) { directory throws(SystemError) -> LockedCreation in
            let opened: FileDescriptor
            switch directory._openTemporary(permissions: permissions) {
            case .success(let descriptor): opened = descriptor
            case .failure(let errno) where Self.meansUnsupported(errno): return .unsupported
            case .failure(let errno): throw SystemError(call: describeOpen(errno), errno: errno)
            }
            let path = CallDescription.join(self.path, name)
            let writable = try RegularFile.adopt(opened, flags: O_RDWR, path: path, describeOpen: describeOpen)
            // The second open of the same file (never of a name in the directory); without /proc it fails and the
            // caller creates by name instead.
            guard
                case .success(let reopened) = FileDescriptor._open("/proc/self/fd/\(opened.rawValue)", flags: O_RDONLY)
            else {
                writable.close()
                return .unsupported
            }
            let lock = RegularFile.adopt(reopened, sameFileAs: writable.statusAtOpen, path: path)
            do throws(SystemError) {
                // Nobody else can hold a lock on a file without a name that only this process has opened.
                guard try lock.tryLock() else {
                    writable.close()
                    lock.close()
                    return .unsupported
                }
            } catch {
                writable.close()
                lock.close()
                throw error
            }
            switch directory._link(opened, as: name) {
            case .success:
                return .created(writable: writable, lock: lock)
            case .failure(let errno):
                writable.close()
                lock.close()
                if errno == .fileExists { return .exists }
                // Any other failure of the link through /proc (ENOENT without /proc, EACCES or EPERM where a policy
                // refuses it, ENOSPC, a directory removed meanwhile) is left to the creation by name, which fails
                // for the same reasons when they are the directory's and reports them.
                return .unsupported
            }
        }
    }

    /// Errors of an O_TMPFILE open that mean "not here", not "failed": EOPNOTSUPP (a file system without it), EISDIR
    /// and EINVAL (kernels before 3.11 and some file systems), EPERM and EXDEV (kept out by a security policy).
    private static func meansUnsupported(_ errno: Errno) -> Bool {
        [EOPNOTSUPP, EISDIR, EINVAL, EPERM, EXDEV].contains(errno.rawValue)
    }
}
