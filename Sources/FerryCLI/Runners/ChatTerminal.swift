import Foundation
import Synchronization

#if canImport(Glibc)
    import Glibc
#endif

/// `ferry chat` on a terminal: reads the keys itself, so that a line that arrives never breaks the line being typed.
///
/// Only when stdin and stdout are terminals (piped input keeps line-by-line reading: `StandardInputLines`). It turns
/// the terminal's echo and canonical mode off (Ctrl-C still interrupts: signals stay on), echoes through a
/// `LineEditor`, and prints every chat line with `printAbove`, which redraws the half-typed line below it. The
/// terminal's mode is restored by `restore()`, at the end of the chat, and by `SignalTrap` before a second Ctrl-C
/// exits at once.
final class ChatTerminal: Sendable {
    private let editor: Mutex<LineEditor>
    private let output: any TextSink
    /// The terminal's settings before the chat changed them, while changed (process-wide: one stdin).
    private static let saved = Mutex<termios?>(nil)

    private init(output: any TextSink, columns: Int) {
        self.output = output
        editor = Mutex(LineEditor(columns: columns))
    }

    /// The chat terminal on stdin and `output` (the process's stdout), or nil when the context is not a real pair of
    /// terminals (or the terminal refuses the mode).
    static func start(context: CommandContext) -> (terminal: ChatTerminal, lines: AsyncStream<String>)? {
        guard context.trapsSignals, context.isStdinTerminal, context.isStdoutTerminal else { return nil }
        var settings = termios()
        guard tcgetattr(STDIN_FILENO, &settings) == 0 else { return nil }
        var raw = settings
        raw.c_lflag &= ~(tcflag_t(ICANON) | tcflag_t(ECHO))
        withUnsafeMutableBytes(of: &raw.c_cc) { bytes in
            bytes[Int(VMIN)] = 1
            bytes[Int(VTIME)] = 0
        }
        guard tcsetattr(STDIN_FILENO, TCSANOW, &raw) == 0 else { return nil }
        saved.withLock { $0 = settings }
        let terminal = ChatTerminal(output: context.stdout, columns: columns())
        let (lines, continuation) = AsyncStream.makeStream(of: String.self)
        let thread = Thread { [terminal] in
            var buffer = [UInt8](repeating: 0, count: 1024)
            reading: while true {
                let count = buffer.withUnsafeMutableBytes { read(STDIN_FILENO, $0.baseAddress, $0.count) }
                if count < 0, errno == EINTR { continue }
                guard count > 0 else { break }
                for outcome in terminal.typed(buffer[..<count]) {
                    switch outcome {
                    case .line(let line): continuation.yield(line)
                    case .endOfInput: break reading
                    }
                }
            }
            continuation.finish()
        }
        thread.name = "ferry-chat-keys"
        thread.start()
        return (terminal, lines)
    }

    /// Puts the terminal back as it was before the chat (idempotent; safe from any thread).
    static func restore() {
        guard
            var settings = saved.withLock({ state -> termios? in
                defer { state = nil }
                return state
            })
        else { return }
        tcsetattr(STDIN_FILENO, TCSANOW, &settings)
    }

    /// Prints `text` (whole lines) above the line being typed, which is drawn again below it.
    func printAbove(_ text: String) {
        editor.withLock { editor in
            editor.columns = Self.columns()
            output.write(editor.printAbove(text))
        }
    }

    /// Shows `prompt` before the line being typed (empty: none).
    func setPrompt(_ prompt: String) {
        editor.withLock { editor in
            editor.columns = Self.columns()
            output.write(editor.setPrompt(prompt))
        }
    }

    /// Echoes typed bytes; returns the lines they completed.
    private func typed(_ bytes: ArraySlice<UInt8>) -> [LineEditor.Outcome] {
        editor.withLock { editor in
            editor.columns = Self.columns()
            let (display, outcomes) = editor.feed(bytes)
            output.write(display)
            return outcomes
        }
    }

    /// Columns of the terminal on stdout, else 80.
    static func columns() -> Int {
        var size = winsize()
        if ioctl(STDOUT_FILENO, UInt(TIOCGWINSZ), &size) == 0, size.ws_col > 0 { return Int(size.ws_col) }
        return 80
    }
}
