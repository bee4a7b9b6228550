import CFerryLinux
import FerryTestSupport
@testable import FerrySystem
import Glibc
import Testing

/// The GNU-only calls of the C shim link and behave as their man pages say.
@Suite("CFerryLinux shim")
struct ShimTests {
    @Test func renameat2NoReplaceRefusesToOverwrite() throws {
        let temporary = try TemporaryDirectory(prefix: "ferry-system-shim")
        defer { temporary.remove() }
        let source = temporary.path + "/source"
        let target = temporary.path + "/target"
        for path in [source, target] {
            let fd = open(path, O_CREAT | O_WRONLY | O_CLOEXEC, 0o600)
            #expect(fd >= 0)
            close(fd)
        }
        #expect(ferry_renameat2(AT_FDCWD, source, AT_FDCWD, target, FERRY_RENAME_NOREPLACE) == -1)
        #expect(Errno.current == Errno(rawValue: EEXIST))
        unlink(target)
        #expect(ferry_renameat2(AT_FDCWD, source, AT_FDCWD, target, FERRY_RENAME_NOREPLACE) == 0)
        #expect(access(target, F_OK) == 0)
        #expect(access(source, F_OK) == -1)
    }

    @Test func getrandomFillsTheBuffer() {
        var bytes = [UInt8](repeating: 0, count: 64)
        let count = bytes.withUnsafeMutableBytes { ferry_getrandom($0.baseAddress, $0.count, 0) }
        #expect(count == 64)
        #expect(bytes.contains { $0 != 0 })
    }

    @Test func pipe2SetsFlags() {
        var fds: [Int32] = [-1, -1]
        #expect(ferry_pipe2(&fds, O_NONBLOCK | O_CLOEXEC) == 0)
        defer {
            close(fds[0])
            close(fds[1])
        }
        #expect(fcntl(fds[0], F_GETFL) & O_NONBLOCK != 0)
        #expect(fcntl(fds[1], F_GETFD) & FD_CLOEXEC != 0)
        var byte: UInt8 = 0
        #expect(read(fds[0], &byte, 1) == -1 && Errno.current == .wouldBlock)
    }
}
