import Glibc

/// Reading a file this program keeps for its user (a cache entry, a record under the config directory), where
/// someone else with access to the directory may have put something in its place.
public enum PrivateFile {
    /// The bytes of the regular file at `path`, at most `limit` of them; nil when there is none, when it is
    /// larger, or when it is not a file this user could have written alone.
    ///
    /// Opened without following a symbolic link and without blocking (a FIFO planted in its place would hold the
    /// open until someone wrote to it, and whoever holds a lock around the read with it); read only when `fstat`
    /// says it is a regular file owned by this user, writable by nobody else, and of at most `limit` bytes.
    public static func read(_ path: String, limit: Int) -> [UInt8]? {
        let descriptor = open(path, O_RDONLY | O_CLOEXEC | O_NOFOLLOW | O_NONBLOCK)
        guard descriptor >= 0 else { return nil }
        defer { close(descriptor) }
        var status = stat()
        guard fstat(descriptor, &status) == 0, status.st_mode & S_IFMT == S_IFREG, status.st_uid == geteuid(),
            status.st_mode & 0o022 == 0, status.st_size >= 0, status.st_size <= limit
        else { return nil }
        var bytes = [UInt8](repeating: 0, count: Int(status.st_size) + 1)
        var count = 0
        while count < bytes.count {
            let read = bytes.withUnsafeMutableBytes {
                Glibc.read(descriptor, $0.baseAddress! + count, $0.count - count)
            }
            if read < 0, errno == EINTR { continue }
            guard read >= 0 else { return nil }
            if read == 0 { break }
            count += read
        }
        // One byte more than fstat said means the file grew meanwhile: past `limit`, or not what was checked.
        guard count <= limit else { return nil }
        return Array(bytes[..<count])
    }

    /// Puts `bytes` at `path` whole or not at all: written to a temporary file beside it (0600, created new, never
    /// through a link) and renamed over it. False when any step failed (nothing is left behind).
    public static func replace(_ path: String, with bytes: [UInt8]) -> Bool {
        let temporary = "\(path).\(getpid()).tmp"
        let descriptor = open(temporary, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC | O_NOFOLLOW, 0o600)
        guard descriptor >= 0 else { return false }
        var written = 0
        while written < bytes.count {
            let count = bytes.withUnsafeBytes { write(descriptor, $0.baseAddress! + written, $0.count - written) }
            if count < 0, errno == EINTR { continue }
            guard count > 0 else { break }
            written += count
        }
        guard close(descriptor) == 0, written == bytes.count, rename(temporary, path) == 0 else {
            unlink(temporary)
            return false
        }
        return true
    }
}
