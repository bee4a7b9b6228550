import Glibc

/// A POSIX error number, as set by a failed system call.
///
/// Why: a small typed wrapper (as in apple/swift-system) lets callers match on well-known codes
/// (`error.errno == .connectionRefused`) without importing Glibc, and prints the C library's message.
public struct Errno: Error, Hashable, Sendable, CustomStringConvertible {
    /// The raw `errno` value.
    public var rawValue: Int32

    /// Wraps a raw `errno` value.
    public init(rawValue: Int32) {
        self.rawValue = rawValue
    }

    /// The calling thread's current `errno`.
    static var current: Errno { Errno(rawValue: Glibc.errno) }

    /// The C library's message for this code (`strerror(3)`), e.g. "Connection refused".
    public var description: String {
        guard let message = strerror(rawValue) else { return "errno \(rawValue)" }
        return String(cString: message)
    }

    /// EINTR: a signal interrupted the call.
    public static let interrupted = Errno(rawValue: EINTR)
    /// EAGAIN / EWOULDBLOCK: the operation would block.
    public static let wouldBlock = Errno(rawValue: EAGAIN)
    /// EINPROGRESS: a non-blocking connect has started.
    public static let inProgress = Errno(rawValue: EINPROGRESS)
    /// EBADF: not an open descriptor.
    public static let badFileDescriptor = Errno(rawValue: EBADF)
    /// EINVAL: an invalid argument.
    public static let invalidArgument = Errno(rawValue: EINVAL)
    /// EADDRINUSE: the address is already bound.
    public static let addressInUse = Errno(rawValue: EADDRINUSE)
    /// EADDRNOTAVAIL: the address is not local.
    public static let addressNotAvailable = Errno(rawValue: EADDRNOTAVAIL)
    /// ECONNREFUSED: nothing listens at the remote address.
    public static let connectionRefused = Errno(rawValue: ECONNREFUSED)
    /// ECONNRESET: the peer reset the connection.
    public static let connectionReset = Errno(rawValue: ECONNRESET)
    /// ECONNABORTED: a pending connection was aborted before it was accepted.
    public static let connectionAborted = Errno(rawValue: ECONNABORTED)
    /// EPIPE: writing to a connection whose other end is closed.
    public static let brokenPipe = Errno(rawValue: EPIPE)
    /// ETIMEDOUT: the connection timed out in the kernel.
    public static let timedOut = Errno(rawValue: ETIMEDOUT)
    /// ENETUNREACH: no route to the network.
    public static let networkUnreachable = Errno(rawValue: ENETUNREACH)
    /// EHOSTUNREACH: no route to the host.
    public static let hostUnreachable = Errno(rawValue: EHOSTUNREACH)
    /// EMFILE: the process is out of file descriptors.
    public static let tooManyOpenFiles = Errno(rawValue: EMFILE)
    /// ENFILE: the system is out of file descriptors.
    public static let tooManyOpenFilesInSystem = Errno(rawValue: ENFILE)
    /// ENOBUFS: the kernel is out of buffer space.
    public static let noBufferSpace = Errno(rawValue: ENOBUFS)
    /// ENOMEM: the kernel is out of memory.
    public static let noMemory = Errno(rawValue: ENOMEM)
    /// EMSGSIZE: a datagram is too large.
    public static let messageTooLong = Errno(rawValue: EMSGSIZE)
    /// EEXIST: the name is taken (e.g. `renameat2` with RENAME_NOREPLACE, `mkdirat`, O_EXCL).
    public static let fileExists = Errno(rawValue: EEXIST)
    /// ENOENT: no such file or directory.
    public static let noSuchFileOrDirectory = Errno(rawValue: ENOENT)
    /// ENOSPC: no space left on the device.
    public static let noSpace = Errno(rawValue: ENOSPC)
    /// EDQUOT: the user's disk quota is exhausted.
    public static let diskQuotaExceeded = Errno(rawValue: EDQUOT)
    /// ELOOP: a symbolic link where O_NOFOLLOW forbids one (or too many levels of links).
    public static let tooManySymbolicLinkLevels = Errno(rawValue: ELOOP)
    /// ENOTDIR: a path component is not a directory.
    public static let notDirectory = Errno(rawValue: ENOTDIR)
    /// EISDIR: a directory where a file was expected.
    public static let isDirectory = Errno(rawValue: EISDIR)
    /// EACCES: permission denied.
    public static let permissionDenied = Errno(rawValue: EACCES)
    /// EROFS: the file system is read-only.
    public static let readOnlyFileSystem = Errno(rawValue: EROFS)
    /// ENAMETOOLONG: a name or path is too long.
    public static let nameTooLong = Errno(rawValue: ENAMETOOLONG)
    /// EXDEV: a rename across file systems.
    public static let crossDevice = Errno(rawValue: EXDEV)
    /// EIO: an input/output error.
    public static let ioError = Errno(rawValue: EIO)
}
