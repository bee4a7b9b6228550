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

/// Review: a character's width was its first scalar's: a spacing mark after a letter, format characters a terminal
/// shows (soft hyphen), and scripts wide since Unicode 13-15 were undercounted, and an undercount wraps a line the
/// board then redraws wrong. Every scalar counts now; overestimating is the safer side.
@Suite struct TerminalWidthScalarTests {
    @Test func everyScalarOfACharacterCounts() {
        #expect(TerminalText.width(of: "\u{915}\u{93F}") == 2, "ka and a spacing vowel sign: two columns")
        #expect(TerminalText.width(of: "\u{AD}") == 1, "a soft hyphen is shown")
        #expect(TerminalText.width(of: "\u{600}") == 1, "a format character outside the zero-width list")
        #expect(TerminalText.width(of: "e\u{301}") == 1)
        #expect(TerminalText.width(of: "\u{1100}\u{1161}\u{11A8}") == 2, "conjoining jamo: one syllable")
        for zero in ["\u{200B}", "\u{200D}", "\u{2060}", "\u{FEFF}", "\u{E0001}"] {
            #expect(TerminalText.width(of: zero) == 0, "\(zero.unicodeScalars.first!.value)")
        }
    }

    @Test func recentWideRangesTakeTwoColumns() {
        for value: UInt32 in [0x16FF0, 0x16FF1, 0x18B00, 0x18D08, 0x1AFF0, 0x1AFFE, 0x1F260, 0x1F265] {
            let text = String(Character(Unicode.Scalar(value)!))
            #expect(TerminalText.width(of: text) == 2, "U+\(String(value, radix: 16))")
        }
    }

    @Test func emojiTakeAtLeastTwoColumns() {
        #expect(TerminalText.width(of: "1\u{FE0F}\u{20E3}") == 2, "a keycap asks for emoji presentation")
        #expect(TerminalText.width(of: "\u{2764}\u{FE0F}") == 2)
        #expect(TerminalText.width(of: "🇫🇷") == 2)
        // Joined by ZWJ: 2 where the terminal joins them, 6 where it does not; the larger is counted.
        #expect(TerminalText.width(of: "👨‍👩‍👧") == 6)
    }
}
