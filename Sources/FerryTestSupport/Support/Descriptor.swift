import Glibc

/// Small blocking I/O loops over raw descriptors, EINTR retried.
///
/// Why: the helpers read pipes and sockets on their own threads; these keep the retry and
/// partial-write logic in one place instead of in every loop.
enum Descriptor {
    /// `read(2)` retried on EINTR: bytes read, 0 at end of file, -1 with errno on error.
    static func read(_ fd: Int32, into buffer: UnsafeMutableRawBufferPointer) -> Int {
        while true {
            let count = Glibc.read(fd, buffer.baseAddress, buffer.count)
            if count < 0 && errno == EINTR { continue }
            return count
        }
    }

    /// Writes every byte (`send` with MSG_NOSIGNAL on sockets, `write` on pipes); false on error.
    static func writeAll(_ fd: Int32, _ bytes: UnsafeRawBufferPointer, socket: Bool) -> Bool {
        var offset = 0
        while offset < bytes.count {
            let rest = UnsafeRawBufferPointer(rebasing: bytes[offset...])
            let count =
                socket
                ? Glibc.send(fd, rest.baseAddress, rest.count, Int32(MSG_NOSIGNAL))
                : Glibc.write(fd, rest.baseAddress, rest.count)
            if count < 0 {
                if errno == EINTR { continue }
                return false
            }
            offset += count
        }
        return true
    }

    /// Closes `fd`, ignoring errors (Linux always releases the descriptor, even on EINTR).
    static func close(_ fd: Int32) {
        _ = Glibc.close(fd)
    }

    /// Ignores SIGPIPE once for this process, so writing to a dead child's stdin is an error, not death.
    static let ignoreBrokenPipe: Void = {
        _ = signal(SIGPIPE, SIG_IGN)
    }()
}
