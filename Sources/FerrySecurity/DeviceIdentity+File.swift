import Foundation
import Glibc

extension DeviceIdentity {
    /// Loads `identity.pem` from `directory`, creating the directory (mode 0700) and the file (mode 0600) when
    /// missing.
    ///
    /// Two processes starting at once agree on one identity: the file is written under a temporary name and linked
    /// into place with `link(2)`, which never replaces; the loser reads the winner's file. A file that other users
    /// can read is refused (as ssh refuses such keys): the key would no longer be secret.
    public static func loadOrCreate(directory: String) throws(SecurityError) -> DeviceIdentity {
        let path = directory + "/" + fileName
        if let identity = try load(path: path) { return identity }
        do {
            try FileManager.default.createDirectory(
                atPath: directory, withIntermediateDirectories: true, attributes: [.posixPermissions: 0o700])
        } catch {
            throw .identity(
                "could not create \(directory): \(error.localizedDescription); set XDG_CONFIG_HOME to a writable"
                    + " directory")
        }
        let identity = try generate()
        let temporary = directory + "/.\(fileName).\(getpid()).\(UInt32.random(in: 0...UInt32.max))"
        try write(try identity.pem(), to: temporary)
        if link(temporary, path) != 0, errno != EEXIST {
            let reason = String(cString: strerror(errno))
            unlink(temporary)
            throw .identity("could not create \(path): \(reason)")
        }
        unlink(temporary)
        guard let stored = try load(path: path) else { throw .identity("\(path) vanished while it was created") }
        return stored
    }

    /// The identity in `path`, nil when there is no such file.
    static func load(path: String) throws(SecurityError) -> DeviceIdentity? {
        let descriptor = open(path, O_RDONLY | O_CLOEXEC | O_NOFOLLOW)
        if descriptor < 0 {
            if errno == ENOENT { return nil }
            throw .identity("could not read \(path): \(String(cString: strerror(errno)))")
        }
        defer { close(descriptor) }
        var status = stat()
        guard fstat(descriptor, &status) == 0, status.st_mode & S_IFMT == S_IFREG else {
            throw .identity("\(path) is not a regular file; remove it to create a new identity")
        }
        guard status.st_mode & 0o077 == 0 else {
            throw .identity(
                "\(path) can be read by other users, so its private key is no longer secret; run"
                    + " `chmod 600 \(path)` if nobody else could have read it, or remove it to create a new identity")
        }
        guard status.st_size <= 64 << 10 else { throw .identity("\(path) is too large to be a ferry identity") }
        var bytes = [UInt8](repeating: 0, count: Int(status.st_size))
        var filled = 0
        while filled < bytes.count {
            let count = bytes.withUnsafeMutableBytes { raw in
                read(descriptor, raw.baseAddress! + filled, raw.count - filled)
            }
            if count < 0, errno == EINTR { continue }
            guard count > 0 else { break }
            filled += count
        }
        do {
            return try DeviceIdentity(pem: Array(bytes.prefix(filled)))
        } catch {
            throw .identity("\(path) is damaged (\(error)); remove it to create a new identity (peers that trusted"
                + " this device will have to trust it again)")
        }
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
