import CFerryLinux
import Glibc

/// File and directory calls on a raw descriptor, in the style of the socket calls: each `_op()` returns
/// `Result<_, Errno>` with EINTR retried, and names its C function. `DirectoryHandle` and `RegularFile` turn the
/// failures into `SystemError`s that say which name failed where.
extension FileDescriptor {
    /// `openat(2)` of `name` relative to this directory with `flags` (O_CLOEXEC is always added).
    func _openAt(_ name: String, flags: Int32, permissions: UInt16 = 0) -> Result<FileDescriptor, Errno> {
        retryingSyscall { openat(rawValue, name, flags | O_CLOEXEC, mode_t(permissions)) }
            .map(FileDescriptor.init(rawValue:))
    }

    /// `open(2)` of an absolute or working-directory-relative `path` (O_CLOEXEC is always added).
    static func _open(_ path: String, flags: Int32, permissions: UInt16 = 0) -> Result<FileDescriptor, Errno> {
        retryingSyscall { Glibc.open(path, flags | O_CLOEXEC, mode_t(permissions)) }
            .map(FileDescriptor.init(rawValue:))
    }

    /// A new regular file without a name in this directory (`openat(2)` with O_TMPFILE | O_RDWR | O_CLOEXEC).
    func _openTemporary(permissions: UInt16) -> Result<FileDescriptor, Errno> {
        retryingSyscall { ferry_open_tmpfile(rawValue, UInt32(permissions)) }.map(FileDescriptor.init(rawValue:))
    }

    /// `linkat(2)` of the open file `file` (from `_openTemporary`) to `name` in this directory.
    func _link(_ file: FileDescriptor, as name: String) -> Result<Void, Errno> {
        retryingSyscall { ferry_link_open_file(file.rawValue, rawValue, name) }.map { _ in () }
    }

    /// `mkdirat(2)`: creates directory `name` in this directory (the umask applies to `permissions`).
    func _makeDirectory(_ name: String, permissions: UInt16) -> Result<Void, Errno> {
        retryingSyscall { mkdirat(rawValue, name, mode_t(permissions)) }.map { _ in () }
    }

    /// `renameat2(2)` of `name` in this directory to `newName` in `target` with `flags` (RENAME_NOREPLACE).
    func _rename(_ name: String, to target: FileDescriptor, as newName: String, flags: UInt32) -> Result<Void, Errno> {
        retryingSyscall { ferry_renameat2(rawValue, name, target.rawValue, newName, flags) }.map { _ in () }
    }

    /// `unlinkat(2)` of `name` in this directory; `flags` is 0 or AT_REMOVEDIR.
    func _unlink(_ name: String, flags: Int32) -> Result<Void, Errno> {
        retryingSyscall { unlinkat(rawValue, name, flags) }.map { _ in () }
    }

    /// `fstatat(2)` of `name` in this directory with AT_SYMLINK_NOFOLLOW (a symlink reports itself).
    func _status(of name: String) -> Result<FileStatus, Errno> {
        var buffer = stat()
        return retryingSyscall { fstatat(rawValue, name, &buffer, AT_SYMLINK_NOFOLLOW) }.map { _ in
            FileStatus(buffer)
        }
    }

    /// `flock(2)` with LOCK_EX | LOCK_NB: an exclusive lock on the open file description, without waiting (EAGAIN
    /// when another open file description holds one).
    func _lockExclusiveNonBlocking() -> Result<Void, Errno> {
        retryingSyscall { flock(rawValue, LOCK_EX | LOCK_NB) }.map { _ in () }
    }

    /// `fstat(2)`.
    func _status() -> Result<FileStatus, Errno> {
        var buffer = stat()
        return retryingSyscall { fstat(rawValue, &buffer) }.map { _ in FileStatus(buffer) }
    }

    /// `fstatvfs(3)`: bytes available to an unprivileged user (`f_bavail * f_frsize`, saturating).
    func _availableBytes() -> Result<UInt64, Errno> {
        var buffer = statvfs()
        return retryingSyscall { fstatvfs(rawValue, &buffer) }.map { _ in
            let (bytes, overflow) = UInt64(buffer.f_bavail).multipliedReportingOverflow(by: UInt64(buffer.f_frsize))
            return overflow ? UInt64.max : bytes
        }
    }

    /// `pread(2)` once: up to `buffer.count` bytes at `offset`; 0 means end of file.
    func _read(into buffer: UnsafeMutableRawBufferPointer, at offset: Int64) -> Result<Int, Errno> {
        retryingSyscall { pread(rawValue, buffer.baseAddress, buffer.count, off_t(offset)) }
    }

    /// `pwrite(2)` once: up to `buffer.count` bytes at `offset`.
    func _write(_ buffer: UnsafeRawBufferPointer, at offset: Int64) -> Result<Int, Errno> {
        retryingSyscall { pwrite(rawValue, buffer.baseAddress, buffer.count, off_t(offset)) }
    }

    /// `ftruncate(2)`.
    func _truncate(to size: Int64) -> Result<Void, Errno> {
        retryingSyscall { ftruncate(rawValue, off_t(size)) }.map { _ in () }
    }

    /// `fdatasync(2)` (data and the metadata needed to read it back) or `fsync(2)` (everything).
    func _sync(dataOnly: Bool) -> Result<Void, Errno> {
        retryingSyscall { dataOnly ? fdatasync(rawValue) : fsync(rawValue) }.map { _ in () }
    }

    /// `sync_file_range(2)` over `count` bytes at `offset`: SYNC_FILE_RANGE_WRITE (start writing the range's
    /// dirty pages), with `wait` also WAIT_BEFORE and WAIT_AFTER (until the range is written back).
    func _syncRange(offset: Int64, count: Int64, wait: Bool) -> Result<Void, Errno> {
        let flags =
            wait
            ? FERRY_SYNC_FILE_RANGE_WAIT_BEFORE | FERRY_SYNC_FILE_RANGE_WRITE | FERRY_SYNC_FILE_RANGE_WAIT_AFTER
            : FERRY_SYNC_FILE_RANGE_WRITE
        return retryingSyscall { ferry_sync_file_range(rawValue, offset, count, flags) }.map { _ in () }
    }

    /// `posix_fadvise(2)` POSIX_FADV_DONTNEED over `count` bytes at `offset`: drops the range's clean pages from the
    /// page cache. A hint, so errors are ignored.
    func adviseDontNeed(offset: Int64, count: Int64) {
        _ = posix_fadvise(rawValue, off_t(offset), off_t(count), POSIX_FADV_DONTNEED)
    }

    /// `syncfs(2)`: the whole file system containing this descriptor.
    func _syncFileSystem() -> Result<Void, Errno> {
        retryingSyscall { ferry_syncfs(rawValue) }.map { _ in () }
    }

    /// `fchmod(2)`.
    func _setPermissions(_ mode: UInt16) -> Result<Void, Errno> {
        retryingSyscall { fchmod(rawValue, mode_t(mode)) }.map { _ in () }
    }

    /// `futimens(2)`: access time now, modification time as given (`nanoseconds` < 1e9, checked by the kernel).
    func _setModificationTime(seconds: Int64, nanoseconds: UInt32) -> Result<Void, Errno> {
        var times = (
            timespec(tv_sec: 0, tv_nsec: FERRY_UTIME_NOW),
            timespec(tv_sec: time_t(truncatingIfNeeded: seconds), tv_nsec: Int(nanoseconds))
        )
        return withUnsafePointer(to: &times) { pair in
            pair.withMemoryRebound(to: timespec.self, capacity: 2) { pointer in
                retryingSyscall { futimens(rawValue, pointer) }.map { _ in () }
            }
        }
    }

    /// `fcntl(2)` F_SETFL with `openFlags` (the flags this descriptor was opened with) less O_NONBLOCK: clears
    /// O_NONBLOCK (set only so that opening a FIFO cannot block) in one call. F_SETFL changes only the status flags
    /// (O_APPEND, O_ASYNC, O_DIRECT, O_NOATIME, O_NONBLOCK) and ignores the access mode and creation flags, so the
    /// flags of the open, which set no other status flag, are exactly the ones to keep; no F_GETFL is needed.
    func _clearNonBlocking(openFlags: Int32) -> Result<Void, Errno> {
        retryingSyscall { fcntl(rawValue, F_SETFL, openFlags & ~O_NONBLOCK) }.map { _ in () }
    }

    /// `posix_fadvise(2)` POSIX_FADV_SEQUENTIAL over the whole file; a hint, so errors are ignored.
    func adviseSequential() {
        _ = posix_fadvise(rawValue, 0, 0, POSIX_FADV_SEQUENTIAL)
    }
}

extension Result where Failure == Errno {
    /// The success value, or a `SystemError` whose call text is built only on failure (it may add a hint that
    /// depends on the errno).
    func get(describing call: (Errno) -> String) throws(SystemError) -> Success {
        switch self {
        case .success(let value): return value
        case .failure(let errno): throw SystemError(call: call(errno), errno: errno)
        }
    }
}
