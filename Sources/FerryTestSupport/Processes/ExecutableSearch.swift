import Foundation

/// Finds system tools (`ip`, `tc`, `ping`) on PATH and in the sbin directories.
///
/// Why: tests run as root from CI and as users from a shell, and PATH does not always include
/// `/usr/sbin`; a missing tool should produce a clear message, not a spawn error.
public enum ExecutableSearch {
    /// The absolute path of `name`, or nil when no executable file of that name exists.
    public static func path(of name: String) -> String? {
        if name.contains("/") {
            return FileManager.default.isExecutableFile(atPath: name) ? name : nil
        }
        let fromPath = (ProcessInfo.processInfo.environment["PATH"] ?? "").split(separator: ":").map(String.init)
        let directories = fromPath + ["/usr/local/sbin", "/usr/sbin", "/sbin", "/usr/local/bin", "/usr/bin", "/bin"]
        for directory in directories where !directory.isEmpty {
            let candidate = directory + "/" + name
            var isDirectory: ObjCBool = false
            if FileManager.default.fileExists(atPath: candidate, isDirectory: &isDirectory), !isDirectory.boolValue,
                FileManager.default.isExecutableFile(atPath: candidate)
            {
                return candidate
            }
        }
        return nil
    }
}
