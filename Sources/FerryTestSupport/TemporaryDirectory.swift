import Foundation
import Glibc

/// A fresh, uniquely named directory under the system temporary directory.
///
/// Why: receive tests need an empty directory each, that never collides with a parallel test and
/// is gone afterwards; `with(_:)` removes it whatever the body does.
public struct TemporaryDirectory: Sendable {
    public let url: URL

    public var path: String { url.path }

    /// Creates the directory (`mkdtemp`), named `<prefix>-XXXXXX`.
    public init(prefix: String = "ferry-test") throws {
        let base = FileManager.default.temporaryDirectory.path
        var template = Array("\(base)/\(prefix)-XXXXXX".utf8CString)
        guard
            let created = template.withUnsafeMutableBufferPointer({ buffer in
                buffer.baseAddress.flatMap { mkdtemp($0) }.map { String(cString: $0) }
            })
        else {
            throw TestSupportError.systemCall("mkdtemp", errno: errno)
        }
        url = URL(fileURLWithPath: created, isDirectory: true)
    }

    /// Deletes the directory and everything in it; errors are ignored (it may be gone already).
    public func remove() {
        try? FileManager.default.removeItem(at: url)
    }

    /// Runs `body` with a new directory and removes it afterwards, also when `body` throws.
    nonisolated(nonsending) public static func with<T>(
        prefix: String = "ferry-test", _ body: (TemporaryDirectory) async throws -> T
    ) async throws -> T {
        let directory = try TemporaryDirectory(prefix: prefix)
        defer { directory.remove() }
        return try await body(directory)
    }
}
