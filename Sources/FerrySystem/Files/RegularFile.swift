import Glibc
import Synchronization

/// An open regular file with positional I/O only (`pread`/`pwrite`), so one file can be read or written by
/// several tasks at once without a shared file offset.
///
/// Why: the transfer engine reads chunks of one file for several peers and writes chunks that arrive out of
/// order; positional calls make each chunk independent. Opening refuses FIFOs, sockets and devices (a FIFO
/// could block forever and has no size), so every `RegularFile` really is one. Calls block the calling thread
/// (regular files are always "ready" for epoll); errors name the call and the file, e.g.
/// `pwrite() on /tmp/in/.ferry-staging/ab12...: No space left on device`.
public final class RegularFile: Sendable {
    /// The path the file was opened under, for messages only.
    public let path: String
    /// The file's status when it was opened (the `fstat(2)` that checked it is a regular file). Callers that need
    /// the status right after opening use this instead of a second `fstat`; anything later calls `status()`.
    public let statusAtOpen: FileStatus
    private let descriptor: OwnedFileDescriptor
    /// The direct-I/O side of `write`, once `enableDirectWrites()` found it possible.
    private let direct = Mutex<DirectWrites?>(nil)

    private init(path: String, descriptor: FileDescriptor, status: FileStatus) {
        self.path = path
        self.statusAtOpen = status
        self.descriptor = OwnedFileDescriptor(descriptor)
    }

    /// Opens `path` for reading (`open(2)` with O_RDONLY | O_CLOEXEC). Follows symbolic links: this is for files
    /// the local user names on the command line, never for names from a peer.
    /// - Throws: `SystemError` ("open(...)"), EINVAL for a FIFO, socket or device (refused without blocking).
    public static func open(path: String) throws(SystemError) -> RegularFile {
        let describeOpen = { (errno: Errno) in CallDescription.call("open", path: path, errno) }
        guard !path.isEmpty, !path.utf8.contains(0) else {
            throw SystemError(call: describeOpen(.invalidArgument), errno: .invalidArgument)
        }
        let flags = O_RDONLY | O_NONBLOCK
        let opened = try FileDescriptor._open(path, flags: flags).get(describing: describeOpen)
        return try adopt(opened, flags: flags, path: path, describeOpen: describeOpen)
    }

    /// Takes ownership of a second descriptor of a file whose status is known (`status`, from another descriptor of
    /// the same open regular file): no system call.
    static func adopt(_ opened: FileDescriptor, sameFileAs status: FileStatus, path: String) -> RegularFile {
        RegularFile(path: path, descriptor: opened, status: status)
    }

    /// Takes ownership of a descriptor opened with `flags`: checks that it is a regular file (`fstat(2)`, kept as
    /// `statusAtOpen`) and clears O_NONBLOCK when `flags` has it; closes it on failure.
    static func adopt(_ opened: FileDescriptor, flags: Int32, path: String, describeOpen: (Errno) -> String)
        throws(SystemError) -> RegularFile
    {
        let status: FileStatus
        do throws(SystemError) {
            status = try opened._status().get { _ in CallDescription.call("fstat", on: path) }
            guard status.kind == .regular else {
                let call = describeOpen(.invalidArgument) + " (not a regular file)"
                throw SystemError(call: call, errno: .invalidArgument)
            }
            if flags & O_NONBLOCK != 0 {
                try opened._clearNonBlocking(openFlags: flags).get { _ in CallDescription.call("fcntl", on: path) }
            }
        } catch {
            opened.close()
            throw error
        }
        return RegularFile(path: path, descriptor: opened, status: status)
    }

    /// The file's status (`fstat(2)`).
    public func status() throws(SystemError) -> FileStatus {
        try descriptor.run(describe("fstat")) { $0._status() }
    }

    /// Takes an exclusive advisory lock on the file without waiting (`flock(2)` with LOCK_EX | LOCK_NB); returns
    /// false when another open file holds it, in this process or in another one.
    ///
    /// Why `flock`: its lock belongs to this open file (one `open`), not to the process, so two opens of one file in
    /// one process exclude each other as two processes do, and closing some other descriptor of the same file does
    /// not release it (a POSIX record lock would be). `close()` releases it; so does the process ending.
    public func tryLock() throws(SystemError) -> Bool {
        try descriptor.withDescriptor(describe("flock")) { file throws(SystemError) in
            switch file._lockExclusiveNonBlocking() {
            case .success: return true
            case .failure(let errno) where errno == .wouldBlock: return false
            case .failure(let errno): throw SystemError(call: describe("flock")(errno), errno: errno)
            }
        }
    }

    /// Reads `count` bytes at `offset` (`pread(2)`, repeated until `count` bytes or the end of the file); fewer
    /// bytes are returned only at the end of the file.
    /// - Throws: `SystemError` ("pread()"), EINVAL for a negative count or an offset past `Int64.max`.
    public func read(count: Int, at offset: UInt64) throws(SystemError) -> [UInt8] {
        let start = try checkedRange(offset: offset, count: count, "pread")
        return try descriptor.withDescriptor(describe("pread")) { file throws(SystemError) in
            var failure: Errno?
            let bytes = [UInt8](unsafeUninitializedCapacity: count) { buffer, initialized in
                while initialized < count {
                    let rest = UnsafeMutableRawBufferPointer(
                        UnsafeMutableBufferPointer(rebasing: buffer[initialized...]))
                    switch file._read(into: rest, at: start + Int64(initialized)) {
                    case .success(0): return
                    case .success(let read): initialized += read
                    case .failure(let errno):
                        failure = errno
                        return
                    }
                }
            }
            if let failure { throw SystemError(call: describe("pread")(failure), errno: failure) }
            return bytes
        }
    }

    /// Writes all of `bytes` at `offset` (`pwrite(2)`, repeated until everything is written).
    /// - Throws: `SystemError` ("pwrite()"), e.g. ENOSPC or EDQUOT; EINVAL for an offset past `Int64.max`.
    public func write(_ bytes: UnsafeRawBufferPointer, at offset: UInt64) throws(SystemError) {
        let start = try checkedRange(offset: offset, count: bytes.count, "pwrite")
        try descriptor.withDescriptor(describe("pwrite")) { file throws(SystemError) in
            var written = try direct.withLock { direct throws(SystemError) -> Int in
                guard let direct else { return 0 }
                return try direct.writePrefix(bytes, at: start).get(describing: describe("pwrite"))
            }
            while written < bytes.count {
                let rest = UnsafeRawBufferPointer(rebasing: bytes[written...])
                let count = try file._write(rest, at: start + Int64(written)).get(describing: describe("pwrite"))
                // pwrite makes no progress only on a broken file system; never loop forever on it.
                guard count > 0 else { throw SystemError(call: describe("pwrite")(.ioError), errno: .ioError) }
                written += count
            }
        }
    }

    /// From now on, writes the whole aligned blocks of each `write` with O_DIRECT, through a second open of the file,
    /// and the rest (a partial last block) through this one; returns whether it will. False, and every write stays
    /// buffered, where the file system reports no direct-I/O alignment (`statx(2)` STATX_DIOALIGN: tmpfs, kernels
    /// before 6.1), /proc/self/fd is missing, or the second open fails. Direct writes do not go through the page
    /// cache, so they are not read back from it: for files written once and left to others (a large received file),
    /// not for ones read again soon. `sync(dataOnly:)` commits both kinds.
    @discardableResult
    public func enableDirectWrites() -> Bool {
        let enabled = try? descriptor.withDescriptor(describe("open")) { file throws(SystemError) in
            direct.withLock { direct in
                if direct == nil { direct = DirectWrites(reopening: file, status: statusAtOpen) }
                return direct != nil
            }
        }
        return enabled ?? false
    }

    /// Whether writes go direct (`enableDirectWrites()` succeeded, and no direct write was refused since).
    public var writesDirectly: Bool {
        direct.withLock { direct in direct.map { !$0.refused } ?? false }
    }

    /// The direct writes' bounce buffer, once a direct write allocated it (tests only).
    var directBufferAddress: UnsafeMutableRawPointer? { direct.withLock { $0?.bufferAddress } }

    /// Writes all of `bytes` (an array, a slice, `Data`...) at `offset`; see `write(_:at:)`.
    public func write(_ bytes: some Collection<UInt8>, at offset: UInt64) throws(SystemError) {
        let contiguous = bytes.withContiguousStorageIfAvailable { buffer in
            Result { () throws(SystemError) in try write(UnsafeRawBufferPointer(buffer), at: offset) }
        }
        if let contiguous { return try contiguous.get() }
        let copied = Array(bytes).withUnsafeBytes { buffer in
            Result { () throws(SystemError) in try write(buffer, at: offset) }
        }
        try copied.get()
    }

    /// Sets the file's size (`ftruncate(2)`): cuts it, or extends it with zeros.
    public func truncate(to size: UInt64) throws(SystemError) {
        guard let length = Int64(exactly: size) else {
            throw SystemError(call: describe("ftruncate")(.invalidArgument), errno: .invalidArgument)
        }
        try descriptor.run(describe("ftruncate")) { $0._truncate(to: length) }
    }

    /// Commits the file to disk: `fdatasync(2)` (data and size) if `dataOnly`, else `fsync(2)` (all metadata).
    public func sync(dataOnly: Bool) throws(SystemError) {
        try descriptor.run(describe(dataOnly ? "fdatasync" : "fsync")) { $0._sync(dataOnly: dataOnly) }
    }

    /// Starts writing the dirty pages of `count` bytes at `offset` to disk without waiting for them
    /// (`sync_file_range(2)` SYNC_FILE_RANGE_WRITE).
    ///
    /// Why: a file written front to back and synced only at its end leaves the whole file dirty in the page cache
    /// until that sync, which then waits for all of it; started as it is written, the disk works while the rest
    /// arrives. Not a durability call (`sync(dataOnly:)` still commits).
    /// - Throws: `SystemError` ("sync_file_range()"), e.g. EIO; none where range writeback is not supported.
    public func startWriteback(at offset: UInt64, count: Int) throws(SystemError) {
        let start = try checkedRange(offset: offset, count: count, "sync_file_range")
        try descriptor.run(describe("sync_file_range")) { file in
            Self.unsupportedIsNothing(file._syncRange(offset: start, count: Int64(count), wait: false))
        }
    }

    /// A file system or file that has no range writeback (EINVAL, ESPIPE, ENOSYS, EOPNOTSUPP) gets none: the hint is
    /// skipped, and the sync before publishing does the work. Any other error (EIO, ENOSPC...) is a write error.
    private static func unsupportedIsNothing(_ result: Result<Void, Errno>) -> Result<Void, Errno> {
        if case .failure(let errno) = result, [EINVAL, ESPIPE, ENOSYS, EOPNOTSUPP].contains(errno.rawValue) {
            return .success(())
        }
        return result
    }

    /// Waits until `count` bytes at `offset` are written back (`sync_file_range(2)` with WAIT_BEFORE, WRITE and
    /// WAIT_AFTER) and then drops their pages from the page cache (`posix_fadvise(2)` POSIX_FADV_DONTNEED).
    ///
    /// Why: pages that stay cached after a big file is written take memory the next pages of the file must be
    /// found again; dropping the written ones lets the kernel reuse them at once. The wait is also flow control:
    /// a writer that outruns the disk waits here rather than piling up dirty pages. Errors are thrown, never
    /// ignored: a wait that reports a failed writeback also clears the error the file's next `fdatasync` would
    /// otherwise have reported, so the caller must treat it as a failed write.
    /// - Throws: `SystemError` ("sync_file_range()"), e.g. EIO; none where range writeback is not supported.
    public func evictWritten(at offset: UInt64, count: Int) throws(SystemError) {
        let start = try checkedRange(offset: offset, count: count, "sync_file_range")
        try descriptor.run(describe("sync_file_range")) { file in
            Self.unsupportedIsNothing(file._syncRange(offset: start, count: Int64(count), wait: true)).map {
                file.adviseDontNeed(offset: start, count: Int64(count))
            }
        }
    }

    /// Reports a failed writeback of this file that its descriptor has not reported yet, after waiting for the
    /// writeback in flight (`sync_file_range(2)` WAIT_BEFORE, WRITE, WAIT_AFTER over the whole file; once a `syncfs`
    /// wrote everything, nothing is left to write and no disk cache is flushed).
    ///
    /// Why: one `syncfs` for a batch of files returns the file system's writeback error, once per descriptor of the
    /// file system, without saying which file it was: a file whose writeback failed could be reported to an earlier
    /// batch's `syncfs` and then look synced in its own. Each file's descriptor reports that file's own error.
    /// - Throws: `SystemError` ("sync_file_range()"), e.g. EIO; none where range writeback is not supported.
    public func checkWrittenBack() throws(SystemError) {
        try descriptor.run(describe("sync_file_range")) { file in
            Self.unsupportedIsNothing(file._syncRange(offset: 0, count: 0, wait: true))
        }
    }

    /// Sets the permission bits to `mode & 0o777` (`fchmod(2)`): setuid, setgid and sticky are never set, as
    /// the mode may come from a peer.
    public func setPermissions(_ mode: UInt16) throws(SystemError) {
        try descriptor.run(describe("fchmod")) { $0._setPermissions(mode & 0o777) }
    }

    /// Sets the modification time (`futimens(2)`; the access time becomes now).
    /// - Throws: `SystemError` ("futimens()"), EINVAL if `nanoseconds` is not below 1e9.
    public func setModificationTime(seconds: Int64, nanoseconds: UInt32) throws(SystemError) {
        guard nanoseconds < 1_000_000_000 else {
            throw SystemError(call: describe("futimens")(.invalidArgument), errno: .invalidArgument)
        }
        try descriptor.run(describe("futimens")) { $0._setModificationTime(seconds: seconds, nanoseconds: nanoseconds) }
    }

    /// Tells the kernel the file will be read sequentially (`posix_fadvise(2)` POSIX_FADV_SEQUENTIAL: more
    /// read-ahead). A hint: errors, and calls after `close()`, are ignored.
    public func adviseSequential() {
        _ = try? descriptor.withDescriptor(describe("posix_fadvise")) { file throws(SystemError) in
            file.adviseSequential()
        }
    }

    /// Closes the file (`close(2)`; once no call on another thread still uses it). Later calls fail with EBADF.
    /// Idempotent; `deinit` closes too.
    public func close() {
        direct.withLock { direct in
            direct?.close()
            direct = nil
        }
        descriptor.close()
    }

    private func describe(_ function: String) -> (Errno) -> String {
        { _ in CallDescription.call(function, on: self.path) }
    }

    /// `offset` as `off_t`, after checking that `offset + count` fits (EINVAL otherwise, never a trap).
    private func checkedRange(offset: UInt64, count: Int, _ function: String) throws(SystemError) -> Int64 {
        guard count >= 0, let start = Int64(exactly: offset), !start.addingReportingOverflow(Int64(count)).overflow
        else {
            throw SystemError(call: describe(function)(.invalidArgument), errno: .invalidArgument)
        }
        return start
    }
}
