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
    /// What `createLinkedFile(_:permissions:)` did.
    public enum LinkedCreation: Sendable {
        /// The new, empty file, open for reading and writing, now named `name`.
        case created(RegularFile)
        /// `name` was taken already (nothing was created).
        case exists
        /// The file system, a missing /proc or a policy does not allow it: create the file by name instead.
        case unsupported
    }

    /// Creates a new empty regular file (mode `permissions` minus the umask) without a name in this directory, then
    /// links it as `name` (`openat(2)` with O_TMPFILE, `linkat(2)` through /proc/self/fd, never replacing).
    /// - Throws: `SystemError` for other failures (EINVAL for a name that is not one component, ENOSPC, EACCES).
    public func createLinkedFile(_ name: String, permissions: UInt16) throws(SystemError) -> LinkedCreation {
        try checkComponent(name, "linkat")
        let describeOpen = describe("openat(O_TMPFILE)", ".")
        return try descriptor.withDescriptor(describeOpen) { directory throws(SystemError) -> LinkedCreation in
            let opened: FileDescriptor
            switch directory._openTemporary(permissions: permissions) {
            case .success(let descriptor): opened = descriptor
            case .failure(let errno) where Self.meansUnsupported(errno): return .unsupported
            case .failure(let errno): throw SystemError(call: describeOpen(errno), errno: errno)
            }
            switch directory._link(opened, as: name) {
            case .success:
                let file = try RegularFile.adopt(
                    opened, flags: O_RDWR, path: CallDescription.join(path, name), describeOpen: describeOpen)
                return .created(file)
            case .failure(let errno):
                opened.close()
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
