import Testing

@testable import FerryCLI

/// The line being typed in `ferry chat` on a terminal: what each key draws, and that a message printed meanwhile
/// leaves the typed text whole below it.
@Suite struct LineEditorTests {
    static let erase = "\r\u{1B}[J"

    @Test func typedTextIsEchoedAndEnterCompletesTheLine() {
        var editor = LineEditor(columns: 80)
        let first = editor.feed(Array("hel".utf8))
        #expect(first.display == Self.erase + "hel")
        #expect(first.outcomes == [])
        let second = editor.feed(Array("lo\n".utf8))
        #expect(second.display == Self.erase + "hello\n")
        #expect(second.outcomes == [.line("hello")])
        #expect(editor.typed == [])
    }

    @Test func aMessageIsPrintedAboveTheHalfTypedLine() {
        var editor = LineEditor(columns: 80)
        _ = editor.feed(Array("half a li".utf8))
        #expect(editor.printAbove("<bob> hi\n") == Self.erase + "<bob> hi\n" + "half a li")
        let rest = editor.feed(Array("ne\r".utf8))
        #expect(rest.outcomes == [.line("half a line")])
        // Nothing typed: the message alone.
        #expect(editor.printAbove("<bob> again\n") == Self.erase + "<bob> again\n")
    }

    /// Issue 28, 10: a chat's pending question shows a prompt before the typed text; it is no part of the line, it
    /// stays through messages printed above, comes back on the next line after Enter, and goes when set empty.
    @Test func aPromptIsDrawnBeforeTheTypedTextAndIsNoPartOfTheLine() {
        var editor = LineEditor(columns: 80)
        _ = editor.feed(Array("hal".utf8))
        #expect(editor.setPrompt("carol? [y/n/a] ") == Self.erase + "carol? [y/n/a] hal")
        #expect(editor.printAbove("<bob> hi\n") == Self.erase + "<bob> hi\n" + "carol? [y/n/a] hal")
        let done = editor.feed(Array("f\n".utf8))
        #expect(done.outcomes == [.line("half")])
        #expect(done.display == Self.erase + "carol? [y/n/a] half\n" + "carol? [y/n/a] ")
        #expect(editor.setPrompt("") == Self.erase)
        #expect(editor.printAbove("x\n") == Self.erase + "x\n")
    }

    @Test func aWrappedLineIsErasedFromItsFirstRow() {
        var editor = LineEditor(columns: 10)
        _ = editor.feed(Array("abcdefghijklmnopqrstuvw".utf8))  // 23 characters: rows 1-3, the cursor on the third
        #expect(editor.printAbove("x\n") == "\r\u{1B}[2A\u{1B}[J" + "x\n" + "abcdefghijklmnopqrstuvw")
    }

    @Test func editingKeys() {
        var editor = LineEditor(columns: 80)
        _ = editor.feed(Array("héllo wörld".utf8))
        _ = editor.feed([0x7F])  // Backspace takes the last character, not its last byte
        #expect(String(decoding: editor.typed, as: UTF8.self) == "héllo wörl")
        _ = editor.feed([0x17])  // Ctrl-W: the last word
        #expect(String(decoding: editor.typed, as: UTF8.self) == "héllo ")
        _ = editor.feed([0x15])  // Ctrl-U: the whole line
        #expect(editor.typed == [])
        // Arrows and other escape sequences are ignored, as are other control keys.
        _ = editor.feed([0x1B, 0x5B, 0x41] + Array("a".utf8) + [0x1B, 0x4F, 0x50, 0x01] + Array("b".utf8))
        #expect(String(decoding: editor.typed, as: UTF8.self) == "ab")
    }

    @Test func controlCharactersAreShownEscapedAndCtrlDEndsOnlyAnEmptyLine() {
        var editor = LineEditor(columns: 80)
        #expect(editor.feed(Array("x".utf8) + [0x04]).outcomes == [])
        _ = editor.feed([0x15])
        #expect(editor.feed([0x04]).outcomes == [.endOfInput])
        _ = editor.feed(Array("a\u{202E}b".utf8))
        #expect(editor.shown == "a\\u{202E}b")
    }
}
