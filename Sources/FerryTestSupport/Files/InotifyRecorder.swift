import Foundation
import Glibc

/// Records every inotify event of one directory on a thread of its own, with each new name's size at the moment
/// the event was read: what a program watching the receive directory would see. Shared by the integration tests
/// (real processes) and the transfer engine's tests (in-process), which watch a receive directory while a transfer
/// fails, so that a name that appears and goes again is caught, not only what is left afterwards.
public final class InotifyRecorder: @unchecked Sendable {
    // @unchecked: `recorded` and `stopped` are only touched under `lock`; the descriptor is owned by the thread until it ends.
    public struct Event: Sendable, CustomStringConvertible {
        public var mask: UInt32
        public var name: String
        public var sizeWhenSeen: Int?
        public var description: String {
            "\(name) mask=0x\(String(mask, radix: 16)) size=\(sizeWhenSeen.map(String.init) ?? "-")"
        }
    }

    private let lock = NSLock()
    private var recorded: [Event] = []
    private var stopped = false
    private let descriptor: Int32
    private let directory: String
    private let finished = DispatchSemaphore(value: 0)
    public static let stopName = ".stop-recording"

    public init(directory: String) throws {
        self.directory = directory
        descriptor = inotify_init1(Int32(IN_CLOEXEC))
        guard descriptor >= 0 else { throw POSIXError(.EIO) }
        let mask = UInt32(IN_CREATE | IN_MODIFY | IN_CLOSE_WRITE | IN_MOVED_TO | IN_MOVED_FROM | IN_DELETE)
        guard inotify_add_watch(descriptor, directory, mask) >= 0 else {
            close(descriptor)
            throw POSIXError(.EIO)
        }
        let thread = Thread { [self] in run() }
        thread.start()
    }

    private func run() {
        var buffer = [UInt8](repeating: 0, count: 64 << 10)
        loop: while true {
            let count = buffer.withUnsafeMutableBytes { read(descriptor, $0.baseAddress, $0.count) }
            if count <= 0 { break }
            var offset = 0
            while offset + 16 <= count {
                let mask = buffer.withUnsafeBytes { $0.loadUnaligned(fromByteOffset: offset + 4, as: UInt32.self) }
                let length = Int(
                    buffer.withUnsafeBytes { $0.loadUnaligned(fromByteOffset: offset + 12, as: UInt32.self) })
                let nameBytes = buffer[(offset + 16)..<min(offset + 16 + length, count)].prefix { $0 != 0 }
                let name = String(decoding: nameBytes, as: UTF8.self)
                offset += 16 + length
                if name == Self.stopName { break loop }
                var info = stat()
                let size = stat(directory + "/" + name, &info) == 0 ? Int(info.st_size) : nil
                lock.withLock { recorded.append(Event(mask: mask, name: name, sizeWhenSeen: size)) }
            }
        }
        close(descriptor)
        finished.signal()
    }

    /// Stops recording (by creating the stop file) and returns every event seen. Calling it again (from a `defer`
    /// that also covers a failing test) returns the same events at once.
    public func stop() -> [Event] {
        guard
            lock.withLock({ () -> Bool in
                defer { stopped = true }; return !stopped
            })
        else {
            return lock.withLock { recorded }
        }
        // Created in place (`open`), not written atomically through a temporary name the recording would show.
        let stopFile = open(directory + "/" + Self.stopName, O_CREAT | O_WRONLY | O_CLOEXEC, 0o600)
        if stopFile >= 0 { close(stopFile) }
        _ = finished.wait(timeout: .now() + 30)
        try? FileManager.default.removeItem(atPath: directory + "/" + Self.stopName)
        return lock.withLock { recorded }
    }
}
