import Foundation
import Glibc
import Testing

@testable import FerrySystem

/// Writes `bytes` to `path` as an outside writer would (not the code under test): open, write, close. The
/// descriptor is opened with O_CLOEXEC: other suites in this process start child processes, and a child that
/// inherited it would close it again later, which inotify reports as a second IN_CLOSE_WRITE (a watcher test saw
/// `moved.txt` twice in a full run).
func writeFile(_ path: String, _ bytes: [UInt8] = Array("hello".utf8)) throws {
    let fd = open(path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0o644)
    guard fd >= 0 else { throw POSIXError(POSIXErrorCode(rawValue: errno) ?? .EIO) }
    defer { close(fd) }
    var written = 0
    while written < bytes.count {
        let count = bytes.withUnsafeBytes { write(fd, $0.baseAddress! + written, $0.count - written) }
        if count < 0, errno == EINTR { continue }
        guard count > 0 else { throw POSIXError(POSIXErrorCode(rawValue: errno) ?? .EIO) }
        written += count
    }
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
