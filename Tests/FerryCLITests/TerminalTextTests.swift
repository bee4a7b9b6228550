import Testing

@testable import FerryCLI

/// Peer-controlled text loses its power over the terminal and keeps everything else.
@Suite struct TerminalTextTests {
    @Test(arguments: [
        ("\u{1B}[31mred\u{1B}[0m", "\\u{1B}[31mred\\u{1B}[0m"),
        ("line\rforged", "line\\u{D}forged"),
        ("two\nlines\ttab", "two\\u{A}lines\\u{9}tab"),
        ("bell\u{07}nul\u{00}del\u{7F}", "bell\\u{7}nul\\u{0}del\\u{7F}"),
        ("c1\u{9B}31m\u{85}", "c1\\u{9B}31m\\u{85}"),
        ("photo\u{202E}gpj.exe", "photo\\u{202E}gpj.exe"),
        ("\u{202A}\u{202B}\u{202C}\u{202D}", "\\u{202A}\\u{202B}\\u{202C}\\u{202D}"),
        ("\u{2066}a\u{2067}b\u{2068}c\u{2069}", "\\u{2066}a\\u{2067}b\\u{2068}c\\u{2069}"),
        ("\u{200E}\u{200F}\u{061C}", "\\u{200E}\\u{200F}\\u{61C}"),
        ("emoji 🚢👩‍👩‍👧", "emoji 🚢👩‍👩‍👧"),
        ("café é", "café é"),
        ("e\u{301} combining", "e\u{301} combining"),
        ("Ελληνικά, עברית, 日本語", "Ελληνικά, עברית, 日本語"),
        ("plain ASCII with \\u{1B} typed literally", "plain ASCII with \\u{1B} typed literally"),
        ("", ""),
    ])
    func escape(input: String, expected: String) {
        #expect(TerminalText.escape(input) == expected)
    }

    @Test func everyControlIsEscaped() {
        for value in UInt32(0)...0x2100 {
            guard let scalar = Unicode.Scalar(value) else {
                continue
            }
            let escaped = TerminalText.escape(String(Character(scalar)))
            let isControl = value < 0x20 || (0x7F...0x9F).contains(value)
            let isBidi =
                [0x061C, 0x200E, 0x200F].contains(value) || (0x202A...0x202E).contains(value)
                || (0x2066...0x2069).contains(value)
            if isControl || isBidi {
                #expect(escaped == "\\u{\(String(value, radix: 16, uppercase: true))}")
            } else {
                #expect(escaped == String(Character(scalar)))
            }
        }
    }
}
