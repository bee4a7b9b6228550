import CFerryLinux
import Glibc

/// A directory opened with O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC; every operation is relative to it (the `openat`
/// family) and never follows a symbolic link in the last component, so nothing outside it is reached through a
/// name.
///
/// Why: received files are named by a peer. Resolving `"sub/photo.jpg"` as a path string would follow a symlink
/// planted at `sub` out of the receive directory; walking one component at a time from an open descriptor, each
/// opened with O_NOFOLLOW, cannot leave it, and renames stay atomic on the same file system. Names must be one
/// component: an empty name, `"."`, `".."`, or one containing `"/"` or NUL fails with EINVAL (never a trap, as
/// a name may come from a peer).
public final class DirectoryHandle: Sendable {
    /// The path the directory was opened under, for messages only (operations use the descriptor).
    public let path: String
    let descriptor: OwnedFileDescriptor

    private static let openFlags = O_RDONLY | O_DIRECTORY | O_NOFOLLOW

    init(path: String, descriptor: FileDescriptor) {
        self.path = path
        self.descriptor = OwnedFileDescriptor(descriptor)
    }

    /// Opens the directory at `path` (`open(2)`; a symbolic link as the last component is refused). With
    /// `createIfMissing`, creates the last component (`mkdir(2)`, `permissions` minus the umask); its parent
    /// must exist.
    public static func open(path: String, createIfMissing: Bool, permissions: UInt16 = 0o755) throws(SystemError)
        -> DirectoryHandle
    {
        let describeOpen = { (errno: Errno) in
            // O_DIRECTORY | O_NOFOLLOW reports a symlink as ENOTDIR: say so when it is one.
            var buffer = stat()
            let isLink = errno == .notDirectory && lstat(path, &buffer) == 0 && buffer.st_mode & S_IFMT == S_IFLNK
            return CallDescription.call("open", path: path, errno) + (isLink ? CallDescription.symlinkHint : "")
        }
        guard !path.isEmpty, !path.utf8.contains(0) else {
            throw SystemError(call: describeOpen(.invalidArgument), errno: .invalidArgument)
        }
        switch FileDescriptor._open(path, flags: openFlags) {
        case .success(let descriptor):
            return DirectoryHandle(path: path, descriptor: descriptor)
        case .failure(let errno) where errno == .noSuchFileOrDirectory && createIfMissing:
            switch retryingSyscall({ mkdir(path, mode_t(permissions)) }) {
            case .success: break
            case .failure(let errno) where errno == .fileExists: break  // created meanwhile by someone else
            case .failure(let errno) where errno == .noSuchFileOrDirectory:
                let call = CallDescription.call("mkdir", path: path, errno) + " (its parent directory must exist)"
                throw SystemError(call: call, errno: errno)
            case .failure(let errno):
                throw SystemError(call: CallDescription.call("mkdir", path: path, errno), errno: errno)
            }
            let descriptor = try FileDescriptor._open(path, flags: openFlags).get(describing: describeOpen)
            return DirectoryHandle(path: path, descriptor: descriptor)
        case .failure(let errno):
            throw SystemError(call: describeOpen(errno), errno: errno)
        }
    }

    /// Opens the subdirectory `name` (`openat(2)` with O_DIRECTORY | O_NOFOLLOW), first creating it
    /// (`mkdirat(2)`) if it is missing and `create` is set. A symbolic link, even to a directory, fails (ENOTDIR
    /// or ELOOP, the message says "a symbolic link, never followed"), as does a file (ENOTDIR).
    public func subdirectory(_ name: String, create: Bool, permissions: UInt16 = 0o755) throws(SystemError)
        -> DirectoryHandle
    {
        try checkComponent(name, "openat")
        let opened = try descriptor.withDescriptor(describe("openat", name)) { directory throws(SystemError) in
            let describeOpen = { (errno: Errno) in
                // O_DIRECTORY | O_NOFOLLOW reports a symlink as ENOTDIR: say so when it is one.
                let isLink = errno == .notDirectory && (try? directory._status(of: name).get())?.kind == .symlink
                return self.describe("openat", name)(errno) + (isLink ? CallDescription.symlinkHint : "")
            }
            switch directory._openAt(name, flags: Self.openFlags) {
            case .success(let descriptor):
                return descriptor
            case .failure(let errno) where errno == .noSuchFileOrDirectory && create:
                switch directory._makeDirectory(name, permissions: permissions) {
                case .success: break
                case .failure(let errno) where errno == .fileExists: break  // created meanwhile, or a symlink
                case .failure(let errno): throw SystemError(call: describe("mkdirat", name)(errno), errno: errno)
                }
                return try directory._openAt(name, flags: Self.openFlags).get(describing: describeOpen)
            case .failure(let errno):
                throw SystemError(call: describeOpen(errno), errno: errno)
            }
        }
        return DirectoryHandle(path: CallDescription.join(path, name), descriptor: opened)
    }

    /// Opens or creates the regular file `name` for reading and writing (`openat(2)` with O_RDWR | O_CREAT |
    /// O_NOFOLLOW, plus O_EXCL if `exclusive`: then an existing name fails with EEXIST; O_RDONLY instead of O_RDWR
    /// unless `writable`). `permissions` minus the umask apply to a new file. A symlink fails (ELOOP); a FIFO,
    /// socket or device fails (EINVAL) without blocking.
    public func createFile(_ name: String, permissions: UInt16 = 0o600, exclusive: Bool, writable: Bool = true)
        throws(SystemError) -> RegularFile
    {
        let flags = (writable ? O_RDWR : O_RDONLY) | O_CREAT | O_NOFOLLOW | (exclusive ? O_EXCL : 0)
        return try openRegular(name, flags: flags, permissions: permissions)
    }

    /// Opens the existing regular file `name` (`openat(2)` with O_NOFOLLOW; O_RDWR if `writable`, else
    /// O_RDONLY). A symlink fails (ELOOP); a FIFO, socket or device fails (EINVAL) without blocking.
    public func openFile(_ name: String, writable: Bool) throws(SystemError) -> RegularFile {
        try openRegular(name, flags: (writable ? O_RDWR : O_RDONLY) | O_NOFOLLOW, permissions: 0)
    }

    private func openRegular(_ name: String, flags: Int32, permissions: UInt16) throws(SystemError) -> RegularFile {
        try checkComponent(name, "openat")
        let describeOpen = describe("openat", name)
        // O_NONBLOCK: opening a FIFO must not wait for a writer; RegularFile.adopt clears it again.
        let opened = try descriptor.run(describeOpen) { directory in
            directory._openAt(name, flags: flags | O_NONBLOCK, permissions: permissions)
        }
        return try RegularFile.adopt(
            opened, flags: flags | O_NONBLOCK, path: CallDescription.join(path, name), describeOpen: describeOpen)
    }

    /// Renames `name` in this directory to `newName` in `target` (`renameat2(2)`); without `replace`, with
    /// RENAME_NOREPLACE, so a taken `newName` fails with EEXIST instead of being overwritten. Both directories
    /// must be on the same file system (EXDEV otherwise).
    public func rename(_ name: String, to target: DirectoryHandle, as newName: String, replace: Bool)
        throws(SystemError)
    {
        let describeRename = { (errno: Errno) in
            "renameat2(\(CallDescription.quoted(name)) in \(self.path), \(CallDescription.quoted(newName)) in "
                + "\(target.path))\(CallDescription.hint(errno))"
        }
        guard CallDescription.isSingleComponent(name), CallDescription.isSingleComponent(newName) else {
            throw SystemError(call: describeRename(.invalidArgument), errno: .invalidArgument)
        }
        try descriptor.withDescriptor(describeRename) { source throws(SystemError) in
            try target.descriptor.run(describeRename) { destination in
                source._rename(name, to: destination, as: newName, flags: replace ? 0 : FERRY_RENAME_NOREPLACE)
            }
        }
    }

    /// Removes the file (or symlink) `name` (`unlinkat(2)`).
    public func removeFile(_ name: String) throws(SystemError) {
        try checkComponent(name, "unlinkat")
        try descriptor.run(describe("unlinkat", name)) { $0._unlink(name, flags: 0) }
    }

    /// Removes the empty directory `name` (`unlinkat(2)` with AT_REMOVEDIR).
    public func removeDirectory(_ name: String) throws(SystemError) {
        try checkComponent(name, "unlinkat")
        try descriptor.run(describe("unlinkat", name)) { $0._unlink(name, flags: AT_REMOVEDIR) }
    }

    /// The status of `name` (`fstatat(2)` with AT_SYMLINK_NOFOLLOW: a symlink reports itself), or nil if there
    /// is no such entry.
    public func status(of name: String) throws(SystemError) -> FileStatus? {
        try checkComponent(name, "fstatat")
        return try descriptor.withDescriptor(describe("fstatat", name)) { directory throws(SystemError) in
            switch directory._status(of: name) {
            case .success(let status): return status
            case .failure(let errno) where errno == .noSuchFileOrDirectory: return nil
            case .failure(let errno): throw SystemError(call: describe("fstatat", name)(errno), errno: errno)
            }
        }
    }

    /// Commits the whole file system holding this directory (`syncfs(2)`): one call for a batch of files.
    public func syncFileSystem() throws(SystemError) {
        try descriptor.run({ _ in CallDescription.call("syncfs", on: path) }) { $0._syncFileSystem() }
    }

    /// Commits the directory itself, i.e. its entries (`fsync(2)`), so a rename into it survives a crash.
    public func sync() throws(SystemError) {
        try descriptor.run({ _ in CallDescription.call("fsync", on: path) }) { $0._sync(dataOnly: false) }
    }

    /// Bytes available to this user on the directory's file system (`fstatvfs(3)`: `f_bavail * f_frsize`).
    public func availableBytes() throws(SystemError) -> UInt64 {
        try descriptor.run({ _ in CallDescription.call("fstatvfs", on: path) }) { $0._availableBytes() }
    }

    /// Closes the directory (`close(2)`; once no call on another thread still uses it). Later operations fail
    /// with EBADF. Idempotent; `deinit` closes too.
    public func close() {
        descriptor.close()
    }

    /// The call text for `function` on `name` in this directory.
    func describe(_ function: String, _ name: String) -> (Errno) -> String {
        { errno in CallDescription.call(function, name, in: self.path, errno) }
    }

    /// Throws EINVAL for a name that is not exactly one path component.
    func checkComponent(_ name: String, _ function: String) throws(SystemError) {
        guard CallDescription.isSingleComponent(name) else {
            throw SystemError(call: describe(function, name)(.invalidArgument), errno: .invalidArgument)
        }
    }
}
