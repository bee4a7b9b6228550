/// A place the CLI writes text to: the terminal's stdout or stderr, or a buffer in tests.
///
/// Commands never touch the process's file descriptors directly; they write to the sinks of their
/// `CommandContext`. That keeps every byte the CLI prints visible to snapshot tests and lets one process run many
/// commands in tests. A sink must accept writes from any thread; each `write` reaches its destination whole and in
/// order, not interleaved with another writer's text. A sink must not block its caller for long: the engine and the
/// session write from inside their actors (`FileHandleTextSink` queues the bytes for a writer of its own).
public protocol TextSink: Sendable {
    /// Writes `text` as it is (no newline added).
    func write(_ text: String)
    /// Writes `text` unless the output is backed up (a terminal that stopped reading), in which case it is dropped
    /// and counted: progress redraws and `-v` lines, which a later one replaces. True if it was kept.
    @discardableResult
    func writeDroppable(_ text: String) -> Bool
    /// True while so much waits to be written that droppable text would be dropped.
    var isBackedUp: Bool { get }
    /// Waits until everything written so far is out (at exit, so that the last lines are never lost).
    func flush()
}

extension TextSink {
    /// By default nothing is dropped: writes `text` and returns true.
    @discardableResult
    public func writeDroppable(_ text: String) -> Bool {
        write(text)
        return true
    }

    /// By default never backed up.
    public var isBackedUp: Bool { false }

    /// By default does nothing, for sinks that write synchronously.
    public func flush() {}

    /// Writes `line` followed by a newline, in one write.
    public func writeLine(_ line: String) {
        write(line + "\n")
    }
}
