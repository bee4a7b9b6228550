import Foundation

/// Where ferry keeps its per-install state: `$XDG_CONFIG_HOME/ferry`, else `~/.config/ferry`.
///
/// The device identity and the trusted peers live side by side, so one function decides the directory for both
/// (an XDG_CONFIG_HOME that is not absolute is ignored, as the XDG spec says) and one creates it, mode 0700:
/// what is inside says who this install trusts and is nobody else's business on a shared machine.
enum ConfigDirectory {
    /// The directory for `environment`; nothing is created.
    static func url(environment: [String: String]) -> URL {
        if let config = environment["XDG_CONFIG_HOME"], config.hasPrefix("/") {
            return URL(fileURLWithPath: config).appendingPathComponent("ferry")
        }
        let home = environment["HOME"] ?? NSHomeDirectory()
        return URL(fileURLWithPath: home).appendingPathComponent(".config/ferry")
    }

    /// Creates `directory` (and missing parents) mode 0700; an existing directory is left as it is.
    static func create(_ directory: URL) throws {
        do {
            try FileManager.default.createDirectory(
                at: directory, withIntermediateDirectories: true, attributes: [.posixPermissions: 0o700])
        } catch {
            throw CLIError.failure(
                "could not create \(directory.path): \(error.localizedDescription); set XDG_CONFIG_HOME to a"
                    + " writable directory")
        }
    }
}
