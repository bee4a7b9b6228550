import Foundation
import Glibc

/// Loopback ports for baseline tools, and waiting until a child listens on one.
///
/// Why: `nc -l` prints nothing when it is ready, and a sender started too early is refused; the kernel's
/// socket table of the listener's own network namespace (`/proc/PID/net/tcp`) says when it listens.
enum ListenerProbe {
    /// A TCP port on 127.0.0.1 that was free a moment ago (bound to port 0, then closed).
    static func freeLoopbackPort() throws -> UInt16 {
        let fd = socket(AF_INET, Int32(SOCK_STREAM.rawValue) | Int32(SOCK_CLOEXEC.rawValue), 0)
        guard fd >= 0 else { throw BenchFailure("socket failed: errno \(errno)") }
        defer { _ = close(fd) }
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_addr.s_addr = UInt32(0x7F00_0001).bigEndian
        var length = socklen_t(MemoryLayout<sockaddr_in>.size)
        let bound = withUnsafeMutablePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) {
                bind(fd, $0, length) == 0 && getsockname(fd, $0, &length) == 0
            }
        }
        guard bound else { throw BenchFailure("bind 127.0.0.1:0 failed: errno \(errno)") }
        return UInt16(bigEndian: address.sin_port)
    }

    /// Waits until a TCP socket listens on `port` in the network namespace of process `pid`. The deadline is a
    /// failure guard only, as long as the bench's other waits for a listener (a shell and `nc` starting on a loaded
    /// two-core machine took more than 10 s once, and failed the row).
    static func waitUntilListening(port: UInt16, pid: Int32, timeout: Duration = .seconds(30)) throws {
        let clock = ContinuousClock()
        let deadline = clock.now + timeout
        let needle = String(format: ":%04X ", port)
        while clock.now < deadline {
            for table in ["tcp", "tcp6"] {
                guard let text = try? String(contentsOfFile: "/proc/\(pid)/net/\(table)", encoding: .utf8) else {
                    continue
                }
                for line in text.split(separator: "\n").dropFirst() {
                    let fields = line.split(separator: " ")
                    if fields.count > 3, (fields[1] + " ").hasSuffix(needle), fields[3] == "0A" { return }
                }
            }
            if kill(pid, 0) != 0 { throw BenchFailure("the listener (pid \(pid)) exited before listening") }
            usleep(10_000)  // a benchmark may poll; tests never do
        }
        throw BenchFailure("nothing listened on port \(port) within \(timeout)")
    }
}

/// A benchmark step that failed, with the message to print in its row.
struct BenchFailure: Error, CustomStringConvertible {
    var description: String

    init(_ description: String) {
        self.description = description
    }
}
