import Foundation
import Synchronization

/// A `TextSink` that writes straight through a `FileHandle` (the process's stdout or stderr).
///
/// Each `write` is one unbuffered `write(2)` of the UTF-8 bytes, so a line is visible as soon as it is written even
/// when the output is a pipe, and a line never interleaves with another thread's line. Failures (a closed pipe:
/// `ferry peers | head -1`) are ignored: SIGPIPE is ignored by the process and a command must not fail because
/// its reader went away.
public final class FileHandleTextSink: TextSink {
    private let handle: FileHandle
    // Serialises writers so two threads' lines never interleave within one write.
    private let lock = Mutex<Void>(())

    public init(_ handle: FileHandle) {
        self.handle = handle
    }

    /// The process's standard output.
    public static let standardOutput = FileHandleTextSink(FileHandle.standardOutput)
    /// The process's standard error.
    public static let standardError = FileHandleTextSink(FileHandle.standardError)

    public func write(_ text: String) {
        let bytes = Data(text.utf8)
        guard !bytes.isEmpty else {
            return
        }
        lock.withLock { _ in
            try? handle.write(contentsOf: bytes)
        }
    }
}
