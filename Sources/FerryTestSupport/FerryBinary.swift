import Foundation

/// Finds the built `ferry` executable for integration tests.
///
/// Why: tests must run the binary of the same build as themselves (debug or release, any scratch
/// path); order: `FERRY_BINARY`, the running executable's directory, then the package's `.build`.
public enum FerryBinary {
    /// The `ferry` executable; throws with every searched path when it is missing.
    public static var url: URL {
        get throws { try locate(named: "ferry") }
    }

    /// Locates a product of this package by name (`ferry`, `ferry-bench`).
    public static func locate(named name: String) throws -> URL {
        var searched: [String] = []
        if let explicit = ProcessInfo.processInfo.environment["FERRY_BINARY"], !explicit.isEmpty, name == "ferry" {
            if isExecutable(explicit) { return URL(fileURLWithPath: explicit) }
            throw TestSupportError.binaryNotFound(name: name, searched: ["FERRY_BINARY=\(explicit) (not executable)"])
        }
        for directory in candidateDirectories() {
            let candidate = directory.appendingPathComponent(name).path
            searched.append(candidate)
            if isExecutable(candidate) { return URL(fileURLWithPath: candidate) }
        }
        throw TestSupportError.binaryNotFound(name: name, searched: searched)
    }

    /// The running executable's directory and its ancestors' `debug`/`release`, then the package's `.build`.
    static func candidateDirectories() -> [URL] {
        var running: [URL] = []
        if let executable = Bundle.main.executableURL { running.append(executable.resolvingSymlinksInPath()) }
        if let first = CommandLine.arguments.first, first.contains("/") {
            let cwd = URL(fileURLWithPath: FileManager.default.currentDirectoryPath, isDirectory: true)
            running.append(URL(fileURLWithPath: first, relativeTo: cwd).standardizedFileURL.resolvingSymlinksInPath())
        }
        var directories: [URL] = []
        for executable in running {
            let directory = executable.deletingLastPathComponent()
            directories.append(directory)
            // Inside an .xctest bundle directory (macOS layout) the products sit further up.
            var ancestor = directory
            for _ in 0..<4 {
                ancestor = ancestor.deletingLastPathComponent()
                if ancestor.lastPathComponent == "debug" || ancestor.lastPathComponent == "release" {
                    directories.append(ancestor)
                }
            }
        }
        let preferred =
            directories.first?.lastPathComponent == "release" ? ["release", "debug"] : ["debug", "release"]
        let packageRoot = URL(fileURLWithPath: #filePath).deletingLastPathComponent()  // FerryTestSupport
            .deletingLastPathComponent().deletingLastPathComponent()  // Sources, package root
        for configuration in preferred {
            directories.append(packageRoot.appendingPathComponent(".build").appendingPathComponent(configuration))
        }
        var seen = Set<String>()
        return directories.filter { seen.insert($0.path).inserted }
    }

    private static func isExecutable(_ path: String) -> Bool {
        var isDirectory: ObjCBool = false
        return FileManager.default.fileExists(atPath: path, isDirectory: &isDirectory) && !isDirectory.boolValue
            && FileManager.default.isExecutableFile(atPath: path)
    }
}
