import Foundation
import Glibc
import Testing

@testable import FerrySystem

/// Writes `bytes` to `path` with plain Foundation (an outside writer, not the code under test).
func writeFile(_ path: String, _ bytes: [UInt8] = Array("hello".utf8)) throws {
    try Data(bytes).write(to: URL(fileURLWithPath: path))
}

/// The bytes at `path`, read with Foundation.
func contents(_ path: String) throws -> [UInt8] {
    [UInt8](try Data(contentsOf: URL(fileURLWithPath: path)))
}

/// Whether anything (even a dangling symlink) exists at `path`.
func exists(_ path: String) -> Bool {
    var buffer = stat()
    return lstat(path, &buffer) == 0
}

/// Runs `body` and returns the `SystemError` it throws (failing the test if it throws nothing or another error).
func systemError(sourceLocation: SourceLocation = #_sourceLocation, _ body: () throws -> Void) -> SystemError? {
    do {
        try body()
        Issue.record("expected a SystemError", sourceLocation: sourceLocation)
    } catch let error as SystemError {
        return error
    } catch {
        Issue.record("expected a SystemError, got \(error)", sourceLocation: sourceLocation)
    }
    return nil
}
