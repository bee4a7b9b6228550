/// A place the CLI writes text to: the terminal's stdout or stderr, or a buffer in tests.
///
/// Commands never touch the process's file descriptors directly; they write to the sinks of their
/// `CommandContext`. That keeps every byte the CLI prints visible to snapshot tests and lets one process run many
/// commands in tests. A sink must accept writes from any thread; each `write` reaches its destination whole and in
/// order, not interleaved with another writer's text.
public protocol TextSink: Sendable {
    /// Writes `text` as it is (no newline added).
    func write(_ text: String)
}

extension TextSink {
    /// Writes `line` followed by a newline, in one write.
    public func writeLine(_ line: String) {
        write(line + "\n")
    }
}
