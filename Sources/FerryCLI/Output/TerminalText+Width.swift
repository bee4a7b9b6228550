extension TerminalText {
    /// The columns `text` takes on a terminal: 2 for each wide character (CJK ideographs, kana, hangul, fullwidth
    /// forms, emoji shown as emoji), 0 for a character that is only a combining mark or a zero-width format
    /// character, 1 for any other. Counting characters instead undercounts a CJK name by half: a line cut to the
    /// terminal's width by characters still wraps, and a redraw that counts its lines leaves the wrapped part behind.
    ///
    /// The East Asian Width classes W and F of Unicode (UAX #11), as terminals and `wcwidth` apply them, by ranges:
    /// the stdlib has no such property. A character's width is its first scalar's, or 2 when any of its scalars has
    /// emoji presentation (a flag, a keycap, an emoji with a skin tone or joined by ZWJ).
    static func width(of text: some StringProtocol) -> Int {
        text.reduce(0) { $0 + width(of: $1) }
    }

    /// The columns one character takes (see `width(of:)` for a string).
    static func width(of character: Character) -> Int {
        guard let first = character.unicodeScalars.first else { return 0 }
        if first.isASCII { return 1 }
        if character.unicodeScalars.contains(where: { $0.properties.isEmojiPresentation }) { return 2 }
        switch first.properties.generalCategory {
        case .nonspacingMark, .enclosingMark, .format: return 0
        default: return isWide(first) ? 2 : 1
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
            0xFE30...0xFE6F, 0xFF00...0xFF60, 0xFFE0...0xFFE6, 0x16FE0...0x16FE4, 0x17000...0x18AFF,
            0x1B000...0x1B2FF, 0x1F200...0x1F251, 0x1F300...0x1F64F, 0x1F900...0x1F9FF, 0x20000...0x2FFFD,
            0x30000...0x3FFFD:
            true
        default:
            false
        }
    }
}
