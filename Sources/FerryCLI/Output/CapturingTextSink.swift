import Synchronization

/// A `TextSink` that keeps everything written to it in memory.
///
/// Tests hand a pair of these to `FerryCommand.main` in a `CommandContext` and then compare the captured text with
/// exact expected output (help and error snapshots), without spawning a process.
public final class CapturingTextSink: TextSink {
    private let buffer = Mutex<String>("")

    /// An empty sink.
    public init() {}

    /// Appends `text` to the captured text; safe from any thread.
    public func write(_ text: String) {
        buffer.withLock { $0 += text }
    }

    /// Everything written so far.
    public var text: String {
        buffer.withLock { $0 }
    }
}
