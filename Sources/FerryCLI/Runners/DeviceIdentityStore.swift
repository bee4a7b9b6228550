import FerryWire
import Foundation

/// This install's device ID, kept in `$XDG_CONFIG_HOME/ferry/device-id` (else `~/.config/ferry/device-id`).
///
/// Created on first use from the system's random source, mode 0600 in a 0700 directory. (The security issue
/// replaces it by the SHA-256 of the install's certificate; the file stays the single place it lives.)
struct DeviceIdentityStore {
    let directory: URL

    init(environment: [String: String]) {
        directory = ConfigDirectory.url(environment: environment)
    }

    var file: URL { directory.appendingPathComponent("device-id") }

    /// Reads the device ID, creating it when missing.
    func load() throws -> DeviceID {
        if let text = try? String(contentsOf: file, encoding: .utf8) {
            let trimmed = text.trimmingCharacters(in: .whitespacesAndNewlines)
            guard let id = DeviceID(string: trimmed) else {
                throw CLIError.failure(
                    "the device ID in \(file.path) is damaged; remove the file to create a new identity")
            }
            return id
        }
        var generator = SystemRandomNumberGenerator()
        let bytes = (0..<DeviceID.length).map { _ in UInt8.random(in: 0...255, using: &generator) }
        guard let id = DeviceID(bytes: bytes) else { throw CLIError.failure("could not create a device ID") }
        do {
            try FileManager.default.createDirectory(
                at: directory, withIntermediateDirectories: true, attributes: [.posixPermissions: 0o700])
            let temporary = directory.appendingPathComponent(".device-id.\(getpid())")
            guard FileManager.default.createFile(
                atPath: temporary.path, contents: Data((id.hex + "\n").utf8), attributes: [.posixPermissions: 0o600])
            else {
                throw CLIError.failure("could not write \(temporary.path)")
            }
            // link(2) never replaces: if another ferry created the file meanwhile, its ID wins.
            if link(temporary.path, file.path) != 0, errno != EEXIST {
                let reason = String(cString: strerror(errno))
                unlink(temporary.path)
                throw CLIError.failure("could not create \(file.path): \(reason)")
            }
            unlink(temporary.path)
        } catch let error as CLIError {
            throw error
        } catch {
            throw CLIError.failure(
                "could not create \(directory.path): \(error.localizedDescription); set XDG_CONFIG_HOME to a"
                    + " writable directory")
        }
        return try load()
    }
}
