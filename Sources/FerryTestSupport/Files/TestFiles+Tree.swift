import Foundation
import Glibc

/// One file of a generated tree: its path relative to the tree's root, and its size.
public struct TreeFile: Sendable, Hashable {
    public var path: String
    public var size: Int

    public init(path: String, size: Int) {
        self.path = path
        self.size = size
    }
}

extension TestFiles {
    /// Writes files of the given relative paths and sizes under `root` (random content, seeded by `seed`
    /// and the file's position in path order); returns them in path order.
    @discardableResult
    public func tree(root: String, files: [String: Int], seed: UInt64 = 1) throws -> [TreeFile] {
        let sorted = files.sorted { $0.key < $1.key }.map { TreeFile(path: $0.key, size: $0.value) }
        for (index, file) in sorted.enumerated() {
            try random(root + "/" + file.path, size: file.size, seed: seed &+ UInt64(index) &* 0x1_0000_0001)
        }
        return sorted
    }

    /// Writes `count` random files whose sizes are drawn from `sizes` (seeded), named `f0000.bin`, ... and
    /// spread over `directories` subdirectories `d00`, `d01`, ... (0: all directly under `root`).
    @discardableResult
    public func tree(
        root: String, files count: Int, sizes: ClosedRange<Int>, directories: Int = 0, seed: UInt64 = 1
    ) throws -> [TreeFile] {
        precondition(count >= 0 && directories >= 0 && sizes.lowerBound >= 0, "counts and sizes are not negative")
        var random = SplitMix64(seed: seed ^ 0x7472_6565)  // "tree"
        var files: [String: Int] = [:]
        for index in 0..<count {
            let name = String(format: "f%04d.bin", index)
            let folder = directories > 0 ? String(format: "d%02d/", index % directories) : ""
            files[folder + name] = sizes.lowerBound + random.below(sizes.count)
        }
        return try tree(root: root, files: files, seed: seed)
    }

    /// The SHA-256 of a file as lowercase hex, computed by `sha256sum` (coreutils).
    public static func sha256(ofFile url: URL, timeout: Duration = .seconds(600)) throws -> String {
        guard let tool = ExecutableSearch.path(of: "sha256sum") else {
            throw TestSupportError.binaryNotFound(name: "sha256sum (package coreutils)", searched: ["PATH"])
        }
        let result = try FerryProcess.run(tool, ["--binary", "--", url.path], timeout: timeout).requireSuccess()
        // A name with a backslash or newline makes sha256sum escape it and start the line with "\\".
        let digest = result.stdout.drop { $0 == "\\" }.prefix(64)
        guard digest.count == 64, digest.allSatisfy(\.isHexDigit) else {
            throw TestSupportError.commandFailed(
                command: result.command.joined(separator: " "), status: result.status, stdout: result.stdout,
                stderr: "no SHA-256 digest in the output")
        }
        return String(digest)
    }
}
