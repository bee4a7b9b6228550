import FerryWire
import Synchronization

#if canImport(Glibc)
    import Glibc
#endif

/// The live progress bars of a command on a terminal: one line per transfer and peer, redrawn in place.
///
/// Progress events arrive from every peer's pump, up to ten per second each; the board redraws at most ten times
/// a second in all, and always when a row appears or goes. Lines printed while bars are shown (a file finished,
/// an error) are written above the bars, which are then drawn again below them, so the bars stay at the bottom
/// of the screen as with curl or apt. It uses only "cursor to the start of the line N lines up" (CSI N F) and
/// "erase to the end of the screen" (CSI J), and never lets a bar wrap, so the line count it moves by is exact.
///
/// A redraw caused by progress alone is written with `TextSink.writeDroppable`: a terminal that stopped reading
/// (Ctrl-S) loses those, never a message or a change of rows, and nobody waits for it. The screen then still shows
/// the last redraw written, with the same rows, so the next redraw moves the cursor by the right count.
final class ProgressBoard: Sendable {
    /// One row: a transfer with one peer.
    struct Key: Hashable, Sendable {
        var transferID: TransferID
        var peerID: PeerID
    }

    private struct State {
        var rows: [(key: Key, line: ProgressLine)] = []
        /// Lines about a peer that has no bar yet (`waiting for alice to accept...`), drawn below the bars until the
        /// peer's bar appears or the note is removed.
        var notes: [(peerID: PeerID, text: String)] = []
        /// Bar lines on the screen below the cursor's line start.
        var drawn = 0
        var lastDraw: ContinuousClock.Instant?
        /// When each row's byte count last grew (or the row appeared): its bar says "stalled" after a while.
        var progressed: [Key: ContinuousClock.Instant] = [:]
    }

    /// The shortest time between two redraws caused by progress alone.
    static let interval = Duration.milliseconds(100)

    private let state = Mutex(State())
    private let sink: any TextSink
    private let width: @Sendable () -> Int
    private let now: @Sendable () -> ContinuousClock.Instant

    /// Draws on `sink` (a terminal), `width()` columns wide; `now` is the clock stalls are measured by.
    init(
        sink: any TextSink, width: @escaping @Sendable () -> Int = { TerminalSize.columns() },
        now: @escaping @Sendable () -> ContinuousClock.Instant = { .now }
    ) {
        self.sink = sink
        self.width = width
        self.now = now
    }

    /// Adds or updates a row; redraws unless the last redraw was less than `interval` ago (a new row, and a
    /// stalled row that makes progress, always redraw).
    func update(_ key: Key, _ line: ProgressLine) {
        let now = self.now()
        state.withLock { state in
            if let index = state.rows.firstIndex(where: { $0.key == key }) {
                // A stalled row that moves again is redrawn at once, so its "stalled" note does not linger.
                var unstalled = false
                if line.bytesDone > state.rows[index].line.bytesDone {
                    unstalled = state.progressed[key].map { now - $0 >= ProgressLine.stalledAfter } ?? false
                    state.progressed[key] = now
                }
                state.rows[index].line = line
                if !unstalled, let last = state.lastDraw, now - last < Self.interval {
                    return
                }
                draw(&state, messages: [], now: now, droppable: true)
            } else {
                state.rows.append((key, line))
                state.progressed[key] = now
                state.notes.removeAll { $0.peerID == key.peerID }
                draw(&state, messages: [], now: now)
            }
        }
    }

    /// Shows `text` (already escaped) below the bars for `peerID` until its bar appears or `removeNote` takes it
    /// away: a line that says what is awaited, which leaves no trace on the screen once it is over.
    func note(_ peerID: PeerID, _ text: String) {
        state.withLock { state in
            state.notes.removeAll { $0.peerID == peerID }
            state.notes.append((peerID, text))
            draw(&state, messages: [], now: now())
        }
    }

    /// Removes the note of `peerID`, if any, and prints `messages` above the bars.
    func removeNote(_ peerID: PeerID, printing messages: [String] = []) {
        state.withLock { state in
            state.notes.removeAll { $0.peerID == peerID }
            draw(&state, messages: messages, now: now())
        }
    }

    /// Called about once a second while bars may be shown: redraws when a row is stalled, so that its "stalled"
    /// note appears and counts up although no progress event comes.
    func tick() {
        let now = self.now()
        state.withLock { state in
            let stalled = state.rows.contains { row in
                state.progressed[row.key].map { now - $0 >= ProgressLine.stalledAfter } ?? false
            }
            if stalled { draw(&state, messages: [], now: now) }
        }
    }

    /// Removes a row (its transfer ended) and prints `messages` above the remaining bars.
    func remove(_ key: Key, printing messages: [String] = []) {
        state.withLock { state in
            state.rows.removeAll { $0.key == key }
            state.progressed[key] = nil
            draw(&state, messages: messages, now: now())
        }
    }

    /// Prints `messages` above the bars.
    func print(_ messages: [String]) {
        state.withLock { state in
            draw(&state, messages: messages, now: now())
        }
    }

    /// Removes every bar from the screen (before a summary, or at exit).
    func clear() {
        state.withLock { state in
            state.rows.removeAll()
            state.progressed.removeAll()
            state.notes.removeAll()
            draw(&state, messages: [], now: now())
        }
    }

    private func draw(
        _ state: inout State, messages: [String], now: ContinuousClock.Instant, droppable: Bool = false
    ) {
        guard state.drawn > 0 || !messages.isEmpty || !state.rows.isEmpty || !state.notes.isEmpty else {
            return
        }
        var text = state.drawn > 0 ? "\u{1B}[\(state.drawn)F\u{1B}[J" : ""
        for message in messages {
            text += message + "\n"
        }
        // One column less than the terminal: a line of exactly the width would wrap on some terminals.
        let columns = max(width() - 1, 20)
        for row in state.rows {
            let line = state.progressed[row.key].map { row.line.stalled(since: $0, now: now) } ?? row.line
            text += line.render(width: columns) + "\n"
        }
        for note in state.notes {
            // Cut by the columns it takes, not its characters: a CJK name is two columns a character, and a note
            // that wraps leaves its first line behind when the board is redrawn.
            text += TerminalText.prefix(note.text, columns: columns) + "\n"
        }
        if droppable {
            // Only progress changed: the rows on the screen are the same whether or not this one is written.
            if sink.writeDroppable(text) { state.lastDraw = now }
            return
        }
        state.drawn = state.rows.count + state.notes.count
        state.lastDraw = now
        sink.write(text)
    }
}

/// The size of the terminal on standard error.
enum TerminalSize {
    /// Columns of the terminal (`TIOCGWINSZ`), else `$COLUMNS`, else 80.
    static func columns(environment: [String: String] = [:]) -> Int {
        var size = winsize()
        if ioctl(STDERR_FILENO, UInt(TIOCGWINSZ), &size) == 0, size.ws_col > 0 {
            return Int(size.ws_col)
        }
        if let text = environment["COLUMNS"], let columns = Int(text), columns > 0 {
            return columns
        }
        return 80
    }
}
