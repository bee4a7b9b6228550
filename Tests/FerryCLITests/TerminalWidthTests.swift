import FerryWire
import Testing

@testable import FerryCLI

/// Review of issue 28, 2: the sender's `waiting for NAME to accept...` note was cut to the terminal's width by
/// characters; a CJK name takes two columns a character, so the note wrapped and the redraw left its first line on
/// the screen. Lines of the board are cut by the columns they take.
@Suite struct TerminalWidthTests {
    @Test func wideCharactersTakeTwoColumnsAndMarksNone() {
        #expect(TerminalText.width(of: "inbox") == 5)
        #expect(TerminalText.width(of: "受信箱") == 6)
        #expect(TerminalText.width(of: "받은편지함") == 10)
        #expect(TerminalText.width(of: "ｆｕｌｌ") == 8)
        #expect(TerminalText.width(of: "e\u{301}") == 1, "e and a combining acute: one character, one column")
        #expect(TerminalText.width(of: "📷") == 2)
        #expect(TerminalText.width(of: "Ünïcödé") == 7)
    }

    @Test func aPrefixFitsTheColumnsWithWholeCharacters() {
        #expect(TerminalText.prefix("受信箱です", columns: 5) == "受信")
        #expect(TerminalText.prefix("ab受信", columns: 3) == "ab")
        #expect(TerminalText.prefix("ab受信", columns: 4) == "ab受")
        #expect(TerminalText.prefix("abc", columns: 10) == "abc")
        #expect(TerminalText.prefix("abc", columns: 0) == "")
    }

    @Test func theWaitingNoteIsCutByTheColumnsItTakes() {
        let sink = CapturingTextSink()
        let frozen = ContinuousClock.now
        let board = ProgressBoard(sink: sink, width: { 31 }, now: { frozen })
        board.note(PeerID(rawValue: 1), "waiting for 受信箱受信箱 to accept...")
        // 30 columns (one less than the terminal): "waiting for " is 12, each ideograph 2.
        #expect(sink.text == "waiting for 受信箱受信箱 to ac\n", "\(sink.text)")
        #expect(TerminalText.width(of: sink.text.dropLast()) == 30)
    }

    @Test func aWideNameInABarKeepsTheBarWithinTheWidth() {
        let line = ProgressLine(name: "受信箱受信箱受信箱受信箱", bytesDone: 50, totalBytes: 100, rate: 0, secondsLeft: nil)
        for width in [20, 40, 60, 79] {
            let shown = line.render(width: width)
            #expect(TerminalText.width(of: shown) <= width, "\(width): \(shown)")
        }
        #expect(ProgressLine.column("受信箱受信箱受信箱受信箱", width: 16) == "受信箱受信箱受~ ")
    }
}
