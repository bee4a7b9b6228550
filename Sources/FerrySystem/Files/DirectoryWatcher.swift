import Glibc
import Synchronization

/// Watches one directory (not recursively) for files that are complete: closed after writing (IN_CLOSE_WRITE) or
/// moved in (IN_MOVED_TO). Directories that appear are ignored. Registered with the reactor (epoll), so waiting
/// blocks no thread.
///
/// Why: `ferry watch DIR` sends each new file once it is complete; a file that is still being written must not
/// be sent half-way, which IN_CREATE or IN_MODIFY would do. Foundation has no file-system source on Linux, so
/// this reads inotify directly. Records are parsed with every length checked, and names that are not valid
/// UTF-8 are skipped (a `String` cannot name them exactly; a rescan after `.overflow` will not find them either).
public final class DirectoryWatcher: Sendable {
    /// Events read per `read(2)`: room for at least 250 records with 255-byte names.
    static let bufferSize = 65536
    /// The inotify record header: wd (Int32), mask, cookie, len (UInt32), then `len` bytes of NUL-padded name.
    static let headerSize = 16

    /// The watched directory, for messages.
    public let path: String
    let registration: Registration
    private let watch: Int32
    private let reactor: Reactor

    /// Starts watching the directory at `path` (`inotify_init1(2)` with IN_NONBLOCK | IN_CLOEXEC,
    /// `inotify_add_watch(2)` with IN_ONLYDIR).
    /// - Throws: `SystemError` (e.g. ENOENT, ENOTDIR, or ENOSPC when the user's inotify watch limit is reached),
    ///   `ReactorError.reactorShutDown`.
    public init(path: String, reactor: Reactor) throws {
        let raw = try retryingSyscall { inotify_init1(Int32(IN_NONBLOCK | IN_CLOEXEC)) }.get("inotify_init1()")
        let descriptor = FileDescriptor(rawValue: raw)
        let mask = UInt32(bitPattern: IN_CLOSE_WRITE | IN_MOVED_TO | IN_DELETE_SELF | IN_MOVE_SELF | IN_ONLYDIR)
        switch retryingSyscall({ inotify_add_watch(raw, path, mask) }) {
        case .success(let watch):
            self.watch = watch
        case .failure(let errno):
            descriptor.close()
            throw SystemError(call: CallDescription.call("inotify_add_watch", path: path, errno), errno: errno)
        }
        registration = try reactor.core.register(descriptor)
        self.path = path
        self.reactor = reactor
    }

    deinit {
        close()
    }

    /// Suspends until the directory has events, and returns them in order (never an empty array). After a batch
    /// with `.gone` the watcher is closed.
    /// - Throws: `ReactorError.closed` after `close()` (or `.gone`), `CancellationError`,
    ///   `ReactorError.reactorShutDown`, or `SystemError` ("read()").
    public func next() async throws -> [WatchEvent] {
        while true {
            let outcome = try registration.withDescriptor { descriptor -> IOResult<[WatchEvent]> in
                var result: Result<IOResult<Int>, Errno> = .success(.wouldBlock)
                let bytes = [UInt8](unsafeUninitializedCapacity: Self.bufferSize) { buffer, count in
                    result = descriptor._read(into: UnsafeMutableRawBufferPointer(buffer))
                    if case .success(.processed(let read)) = result { count = min(read, Self.bufferSize) }
                }
                switch try result.get("read()") {
                case .processed: return .processed(Self.parse(bytes, watch: watch))
                case .wouldBlock: return .wouldBlock
                }
            }
            switch outcome {
            case .processed(let events) where events.isEmpty:
                continue
            case .processed(let events):
                if events.contains(.gone) { close() }
                return events
            case .wouldBlock:
                try await registration.waitUntilReady(for: .read)
            }
        }
    }

    /// Stops watching (`close(2)` of the inotify descriptor); a pending `next()` throws `ReactorError.closed`.
    /// Idempotent.
    public func close() {
        registration.close(reason: .closed)
    }

    /// Parses a buffer of inotify records for watch descriptor `watch`. A record that does not fit ends the
    /// parse (the kernel only returns whole records); repeated `.overflow` or `.gone` are reported once.
    static func parse(_ bytes: [UInt8], watch: Int32) -> [WatchEvent] {
        var events: [WatchEvent] = []
        func add(_ event: WatchEvent) {
            if event == .overflow || event == .gone, events.contains(event) { return }
            events.append(event)
        }
        bytes.withUnsafeBytes { buffer in
            var offset = 0
            while buffer.count - offset >= headerSize {
                let descriptor = buffer.loadUnaligned(fromByteOffset: offset, as: Int32.self)
                let mask = buffer.loadUnaligned(fromByteOffset: offset + 4, as: UInt32.self)
                let nameLength = Int(buffer.loadUnaligned(fromByteOffset: offset + 12, as: UInt32.self))
                let nameStart = offset + headerSize
                guard nameLength <= buffer.count - nameStart else { return }
                offset = nameStart + nameLength
                if mask & UInt32(bitPattern: IN_Q_OVERFLOW) != 0 {
                    add(.overflow)
                    continue
                }
                guard descriptor == watch else { continue }
                if mask & UInt32(bitPattern: IN_IGNORED | IN_DELETE_SELF | IN_MOVE_SELF | IN_UNMOUNT) != 0 {
                    add(.gone)
                    continue
                }
                guard mask & UInt32(bitPattern: IN_ISDIR) == 0,
                    mask & UInt32(bitPattern: IN_CLOSE_WRITE | IN_MOVED_TO) != 0
                else { continue }
                let field = buffer[nameStart..<(nameStart + nameLength)]
                let name = field.prefix { $0 != 0 }
                guard !name.isEmpty, let text = String(validating: name, as: UTF8.self) else { continue }
                add(.fileReady(name: text))
            }
        }
        return events
    }
}
