import Dispatch
import Foundation
import Synchronization

/// A `TextSink` that writes through a `FileHandle` (the process's stdout or stderr) on a writer queue of its own, so
/// that no caller ever blocks on the output.
///
/// Why: a terminal that stops reading (Ctrl-S, a pipe nobody drains) blocks `write(2)`. The transfer engine and the
/// session log from inside their actors and the progress board draws from the engine's events; a blocked write
/// there stalled answers, heartbeats and links. Here `write` only queues the bytes: the queue's thread does the
/// `write(2)`, whole texts in the order given (a text is never split, and a line never interleaves with another),
/// unbuffered, so a line is visible as soon as the thread gets to it even when the output is a pipe.
///
/// Texts queued while the queue's thread is busy go out together, in order, joined into writes of at most 4 KiB of
/// whole texts (`atomicWrite`): a send of many small files prints a line for each, and a wakeup of the writer thread
/// and a system call per line were about 3 % of a sender's CPU in perf (ARCHITECTURE "Row 2, a fourth session").
///
/// Text that may be lost (`writeDroppable`: progress redraws, `-v` lines) is dropped while more than
/// `droppableBound` bytes wait, and counted; when the output drains, one line says how many were dropped. Everything
/// else is always queued, never dropped; `flush()` waits until it is written (at exit). Failures (a closed pipe:
/// `ferry peers | head -1`) are ignored: SIGPIPE is ignored by the process and a command must not fail because its
/// reader went away.
public final class FileHandleTextSink: TextSink {
    private struct Backlog {
        /// Bytes queued and not yet written.
        var pending = 0
        /// Droppable texts dropped since the output last drained.
        var dropped = 0
        /// Texts queued and not yet taken by the writer thread, in order.
        var waiting: [String] = []
        /// Whether a drain is queued that has not yet taken `waiting`.
        var drainQueued = false
    }

    /// Droppable text is dropped while more than this many bytes wait to be written.
    public static let droppableBound = 64 * 1024

    /// The most bytes one `write(2)` carries when it joins texts: `PIPE_BUF` on Linux, up to which a write to a pipe
    /// is atomic. Another writer of the same pipe (the process's other output, another process: `2>&1`, a shared
    /// terminal or log) could otherwise put its bytes in the middle of a line. A single longer text goes alone, as
    /// before the joining.
    static let atomicWrite = 4096

    private let handle: FileHandle
    private let queue: DispatchQueue
    private let backlog = Mutex(Backlog())

    /// A sink writing to `handle` from a serial queue named `label`; it never closes the handle.
    public init(_ handle: FileHandle, label: String = "ferry.output") {
        self.handle = handle
        queue = DispatchQueue(label: label)
    }

    /// The process's standard output.
    public static let standardOutput = FileHandleTextSink(FileHandle.standardOutput, label: "ferry.stdout")
    /// The process's standard error.
    public static let standardError = FileHandleTextSink(FileHandle.standardError, label: "ferry.stderr")

    /// Queues `text` to be written; never dropped, never blocks.
    public func write(_ text: String) {
        enqueue(text, droppable: false)
    }

    /// Queues `text` unless more than `droppableBound` bytes wait, in which case it is dropped and counted.
    /// Returns whether it was queued.
    @discardableResult
    public func writeDroppable(_ text: String) -> Bool {
        enqueue(text, droppable: true)
    }

    /// True while more than `droppableBound` bytes wait to be written.
    public var isBackedUp: Bool {
        backlog.withLock { $0.pending > Self.droppableBound }
    }

    /// Waits until everything written before is out (or failed): the last lines of a command are never lost.
    public func flush() {
        queue.sync {}
    }

    /// Droppable texts dropped since the output last drained (for tests).
    var droppedCount: Int {
        backlog.withLock { $0.dropped }
    }

    @discardableResult
    private func enqueue(_ text: String, droppable: Bool) -> Bool {
        guard !text.isEmpty else { return true }
        let (admitted, drain) = backlog.withLock { backlog -> (Bool, Bool) in
            if droppable, backlog.pending > Self.droppableBound {
                backlog.dropped += 1
                return (false, false)
            }
            backlog.pending += text.utf8.count
            backlog.waiting.append(text)
            defer { backlog.drainQueued = true }
            return (true, !backlog.drainQueued)
        }
        if drain { queue.async { [self] in self.drain() } }
        return admitted
    }

    /// On the queue: writes every text waiting, whole texts joined into writes of at most `atomicWrite` bytes.
    private func drain() {
        let texts = backlog.withLock { backlog -> [String] in
            backlog.drainQueued = false
            defer { backlog.waiting = [] }
            return backlog.waiting
        }
        guard !texts.isEmpty else { return }
        var written = 0
        var batch: [UInt8] = []
        for text in texts {
            if !batch.isEmpty, batch.count + text.utf8.count > Self.atomicWrite {
                try? handle.write(contentsOf: batch)
                written += batch.count
                batch.removeAll(keepingCapacity: true)
            }
            batch.append(contentsOf: text.utf8)
        }
        try? handle.write(contentsOf: batch)
        written += batch.count
        let dropped = backlog.withLock { backlog in
            backlog.pending -= written
            guard backlog.pending == 0, backlog.dropped > 0 else { return 0 }
            defer { backlog.dropped = 0 }
            return backlog.dropped
        }
        if dropped > 0 {
            let note = "ferry: the output was not being read: \(dropped) progress updates or log lines were dropped\n"
            try? handle.write(contentsOf: Data(note.utf8))
        }
    }
}
