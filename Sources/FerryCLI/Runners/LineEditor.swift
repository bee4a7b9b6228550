/// The line a person is typing in `ferry chat` on a terminal, kept whole while other lines are printed.
///
/// With the terminal's own line editing (canonical mode), a message printed while someone types lands in the
/// middle of their half-typed line, which then seems lost. So chat reads the keys itself (`ChatTerminal` turns
/// echo and canonical mode off) and this value keeps what was typed: each key gives the text that redraws the line,
/// and a message is printed by erasing the line, writing the message, and drawing the line again below it.
///
/// Pure: bytes in, text out, no terminal. Keys understood: printable text (UTF-8), Backspace, Ctrl-U (erase the
/// line), Ctrl-W (erase a word), Enter (the line is done and stays on screen), Ctrl-D on an empty line (end of
/// input); other control keys and escape sequences (arrows, function keys) are ignored.
struct LineEditor: Sendable {
    /// What typing produced.
    enum Outcome: Equatable, Sendable {
        /// Enter: the line typed.
        case line(String)
        /// Ctrl-D on an empty line.
        case endOfInput
    }

    /// Where an escape sequence is, while one is being skipped.
    private enum Escape: Sendable {
        case none
        /// After ESC.
        case started
        /// After `ESC [` or `ESC O`: up to a final byte (0x40-0x7E).
        case sequence
    }

    /// The bytes typed so far on the current line.
    private(set) var typed: [UInt8] = []
    private var escape = Escape.none
    /// Characters of the line as it is on the screen now (to erase it).
    private var shownCount = 0
    /// The terminal's width in columns, to erase a line that wrapped.
    var columns: Int
    /// Drawn before the typed text (a chat's pending question: `carol? [y/n/a] `); not part of the line. Set it with
    /// `setPrompt`, which redraws.
    private(set) var prompt = ""

    init(columns: Int) {
        self.columns = max(columns, 1)
    }

    /// The typed line as it is shown: escaped, as every text on ferry's terminal.
    var shown: String {
        TerminalText.escape(String(decoding: typed, as: UTF8.self))
    }

    /// Takes typed bytes; returns the text that shows the result on the terminal, and the lines completed.
    mutating func feed(_ bytes: some Sequence<UInt8>) -> (display: String, outcomes: [Outcome]) {
        var display = ""
        var outcomes: [Outcome] = []
        var changed = false
        for byte in bytes {
            switch escape {
            case .started:
                escape = byte == UInt8(ascii: "[") || byte == UInt8(ascii: "O") ? .sequence : .none
                continue
            case .sequence:
                if (0x40...0x7E).contains(byte) { escape = .none }
                continue
            case .none:
                break
            }
            switch byte {
            case 0x1B:
                escape = .started
            case 0x0A, 0x0D:
                if changed { display += redraw() }
                changed = false
                outcomes.append(.line(String(decoding: typed, as: UTF8.self)))
                typed = []
                display += "\n" + draw()  // the prompt again, if there is one, on the new line
            case 0x04:
                if typed.isEmpty { outcomes.append(.endOfInput) }
            case 0x7F, 0x08:
                var text = String(decoding: typed, as: UTF8.self)
                if !text.isEmpty {
                    text.removeLast()
                    typed = Array(text.utf8)
                    changed = true
                }
            case 0x15:
                typed = []
                changed = true
            case 0x17:
                while typed.last == UInt8(ascii: " ") { typed.removeLast() }
                while let last = typed.last, last != UInt8(ascii: " ") { typed.removeLast() }
                changed = true
            case 0x09:
                typed.append(UInt8(ascii: " "))
                changed = true
            case 0x00...0x1F:
                continue
            default:
                typed.append(byte)
                changed = true
            }
        }
        if changed { display += redraw() }
        return (display, outcomes)
    }

    /// The text that prints `text` (whole lines, each ending in a newline) above the line being typed: erases the
    /// line, writes `text`, and draws the line again.
    mutating func printAbove(_ text: String) -> String {
        erase() + text + draw()
    }

    /// The text that shows the line with `prompt` before it from now on.
    mutating func setPrompt(_ prompt: String) -> String {
        let erasing = erase()
        self.prompt = prompt
        return erasing + draw()
    }

    /// Erases the line and draws it as it is now.
    private mutating func redraw() -> String {
        erase() + draw()
    }

    /// Moves to the start of the line as shown (up the rows it wrapped onto) and clears to the end of the screen.
    private func erase() -> String {
        let rowsAbove = max(0, shownCount - 1) / columns
        return "\r" + (rowsAbove > 0 ? "\u{1B}[\(rowsAbove)A" : "") + "\u{1B}[J"
    }

    private mutating func draw() -> String {
        let text = prompt + shown
        shownCount = text.count
        return text
    }
}
