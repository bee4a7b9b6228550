import Foundation
import Glibc

/// A private key file in the configuration directory (`identity.pem`, `localsend-identity.pem`): read only as this
/// process's own regular file that nobody else can read, created whole and once.
///
/// `what` names the file's role in messages ("identity", "LocalSend identity"), each of which says what to do.
enum KeyFile {
    /// The largest key file read (ours are 0.5-2 KiB).
    static let maxBytes = 64 << 10

    /// The file's bytes; nil when there is no such file.
    ///
    /// Opened without following a symbolic link; refused when it is not a regular file, when other users can read
    /// it (its key would no longer be secret, as ssh refuses such keys) or when it is larger than `maxBytes`.
    static func read(path: String, what: String) throws(SecurityError) -> [UInt8]? {
        let descriptor = open(path, O_RDONLY | O_CLOEXEC | O_NOFOLLOW | O_NONBLOCK)
        if descriptor < 0 {
            if errno == ENOENT { return nil }
            throw .identity("could not read \(path): \(String(cString: strerror(errno)))")
        }
        defer { close(descriptor) }
        var status = stat()
        guard fstat(descriptor, &status) == 0, status.st_mode & S_IFMT == S_IFREG else {
            throw .identity("\(path) is not a regular file; remove it to create a new \(what)")
        }
        guard status.st_uid == geteuid() else {
            throw .identity(
                "\(path) is owned by user \(status.st_uid), not by this user (\(geteuid())), who could read or replace"
                    + " its private key; run `chown \(geteuid()) \(path)` if that user is you, or remove it to create a"
                    + " new \(what)")
        }
        guard status.st_mode & 0o077 == 0 else {
            throw .identity(
                "\(path) can be read by other users, so its private key is no longer secret; run"
                    + " `chmod 600 \(path)` if nobody else could have read it, or remove it to create a new \(what)")
        }
        guard status.st_size <= maxBytes else { throw .identity("\(path) is too large to be a ferry \(what)") }
        var bytes = [UInt8](repeating: 0, count: Int(status.st_size))
        var filled = 0
        while filled < bytes.count {
            let count = bytes.withUnsafeMutableBytes { raw in
                Glibc.read(descriptor, raw.baseAddress! + filled, raw.count - filled)
            }
            if count < 0, errno == EINTR { continue }
            guard count > 0 else { break }
            filled += count
        }
        return Array(bytes.prefix(filled))
    }

    /// Creates `directory` (mode 0700) when missing and puts `bytes` at `directory/fileName` (mode 0600) unless a
    /// file is there already, which is kept.
    ///
    /// Two processes creating the file at once agree on one: it is written and synced under a temporary name, then
    /// linked into place with `link(2)`, which never replaces; the loser's file is removed and it reads the
    /// winner's.
    static func create(_ bytes: [UInt8], directory: String, fileName: String) throws(SecurityError) {
        do {
            try FileManager.default.createDirectory(
                atPath: directory, withIntermediateDirectories: true, attributes: [.posixPermissions: 0o700])
        } catch {
            throw .identity(
                "could not create \(directory): \(error.localizedDescription); set XDG_CONFIG_HOME to a writable"
                    + " directory")
        }
        let path = directory + "/" + fileName
        let temporary = directory + "/.\(fileName).\(getpid()).\(UInt32.random(in: 0...UInt32.max))"
        try write(bytes, to: temporary)
        if link(temporary, path) != 0, errno != EEXIST {
            let reason = String(cString: strerror(errno))
            unlink(temporary)
            throw .identity("could not create \(path): \(reason)")
        }
        unlink(temporary)
    }

    private static func write(_ bytes: [UInt8], to path: String) throws(SecurityError) {
        let descriptor = open(path, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC | O_NOFOLLOW, 0o600)
        guard descriptor >= 0 else {
            throw .identity("could not create \(path): \(String(cString: strerror(errno)))")
        }
        defer { close(descriptor) }
        var written = 0
        while written < bytes.count {
            let count = bytes.withUnsafeBytes { raw in
                Glibc.write(descriptor, raw.baseAddress! + written, raw.count - written)
            }
            if count < 0, errno == EINTR { continue }
            guard count > 0 else {
                let reason = String(cString: strerror(errno))
                unlink(path)
                throw .identity("could not write \(path): \(reason)")
            }
            written += count
        }
        guard fsync(descriptor) == 0 else {
            let reason = String(cString: strerror(errno))
            unlink(path)
            throw .identity("could not write \(path): \(reason)")
        }
    }
}
