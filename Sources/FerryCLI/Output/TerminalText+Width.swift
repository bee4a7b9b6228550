extension TerminalText {
    /// The columns `text` takes on a terminal: 2 for each wide character (CJK ideographs, kana, hangul, fullwidth
    /// forms, emoji shown as emoji), 0 for a combining mark or a zero-width character, 1 for any other. Counting
    /// characters instead undercounts a CJK name by half: a line cut to the terminal's width by characters still
    /// wraps, and a redraw that counts its lines leaves the wrapped part behind.
    ///
    /// The East Asian Width classes W and F of Unicode (UAX #11), as terminals and `wcwidth` apply them, by ranges:
    /// the stdlib has no such property. A character's width is the sum of its scalars' (a spacing vowel sign after
    /// its letter counts), and at least 2 when any of its scalars has emoji presentation or it asks for it with
    /// U+FE0F (a flag, a keycap such as 1️⃣, ❤️, an emoji with a skin tone; emoji joined by ZWJ count each, which
    /// overestimates where the terminal joins them: an overestimate leaves a column free, an underestimate wraps).
    static func width(of text: some StringProtocol) -> Int {
        text.reduce(0) { $0 + width(of: $1) }
    }

    /// The columns one character takes (see `width(of:)` for a string).
    static func width(of character: Character) -> Int {
        let scalars = character.unicodeScalars
        if scalars.count == 1, let only = scalars.first, only.isASCII { return 1 }
        let sum = scalars.reduce(0) { $0 + width(of: $1) }
        let emoji = scalars.contains { $0.properties.isEmojiPresentation || $0.value == 0xFE0F }
        return emoji ? max(sum, 2) : sum
    }

    /// The columns one scalar takes on its own: 0 for a nonspacing or enclosing mark and the zero-width characters
    /// (spaces and joiners U+200B-200F, U+2060-2064, U+FEFF, tags U+E0000-E0FFF, the hangul jamo that join a
    /// syllable U+1160-11FF), 2 for a wide one, else 1 (other format characters are shown by terminals).
    private static func width(of scalar: Unicode.Scalar) -> Int {
        if scalar.isASCII { return 1 }
        switch scalar.value {
        case 0x200B...0x200F, 0x2060...0x2064, 0xFEFF, 0xE0000...0xE0FFF, 0x1160...0x11FF: return 0
        default: break
        }
        switch scalar.properties.generalCategory {
        case .nonspacingMark, .enclosingMark: return 0
        default: return isWide(scalar) ? 2 : 1
        }
    }

    /// The longest start of `text` that fits in `columns` terminal columns (whole characters only).
    static func prefix(_ text: String, columns: Int) -> Substring {
        var used = 0
        var end = text.startIndex
        for index in text.indices {
            used += width(of: text[index])
            guard used <= columns else { break }
            end = text.index(after: index)
        }
        return text[..<end]
    }

    /// Whether `scalar` is East Asian Wide or Fullwidth.
    private static func isWide(_ scalar: Unicode.Scalar) -> Bool {
        switch scalar.value {
        case 0x1100...0x115F, 0x231A...0x231B, 0x2329...0x232A, 0x2E80...0x303E, 0x3041...0x33FF, 0x3400...0x4DBF,
            0x4E00...0x9FFF, 0xA000...0xA4CF, 0xA960...0xA97F, 0xAC00...0xD7A3, 0xF900...0xFAFF, 0xFE10...0xFE19,
            0xFE30...0xFE6F, 0xFF00...0xFF60, 0xFFE0...0xFFE6, 0x16FE0...0x16FE4, 0x16FF0...0x16FF1, 0x17000...0x18AFF,
            0x18B00...0x18D08, 0x1AFF0...0x1AFFE,
            0x1B000...0x1B2FF, 0x1F200...0x1F251, 0x1F260...0x1F265, 0x1F300...0x1F64F, 0x1F900...0x1F9FF,
            0x20000...0x2FFFD,
            0x30000...0x3FFFD:
            true
        default:
            false
        }
    }
}
