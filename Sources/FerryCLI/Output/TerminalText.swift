import FerryTransfer

/// Makes text that a peer controls safe to print on a terminal.
///
/// Display names, session IDs, chat lines and file names come from the network. Printed raw, an escape sequence
/// in them could recolour or clear the screen, move the cursor, set the window title, or (through bidi overrides)
/// make `photo<U+202E>gpj.exe` display as `photoexe.jpg`; a CR or LF could forge a line that seems to come from
/// someone else. `escape` turns exactly those characters into visible `\u{XX}` escapes and leaves everything else
/// (letters of any script, emoji, combining marks) as it is.
public enum TerminalText {
    /// Returns `text` with every C0 control (U+0000-U+001F, including ESC, CR, LF, TAB, BEL), DEL (U+007F), every
    /// C1 control (U+0080-U+009F) and every Unicode bidi control (U+061C, U+200E, U+200F, U+202A-U+202E,
    /// U+2066-U+2069) replaced by `\u{HEX}` (uppercase hex, as Swift writes it).
    public static func escape(_ text: String) -> String {
        guard text.unicodeScalars.contains(where: needsEscape) else {
            return text
        }
        var result = String.UnicodeScalarView()
        for scalar in text.unicodeScalars {
            if needsEscape(scalar) {
                result.append(contentsOf: "\\u{\(String(scalar.value, radix: 16, uppercase: true))}".unicodeScalars)
            } else {
                result.append(scalar)
            }
        }
        return String(result)
    }

    /// `text` escaped and, beyond `TransferError.longestShown` (80) characters, cut to its start and end around
    /// "..." with its length: how messages echo what someone typed (a `--to` value, a path), which can be as
    /// long as a command line allows.
    public static func excerpt(_ text: String) -> String {
        escape(TransferError.shown(text))
    }

    /// Whether `scalar` is one that `escape` replaces.
    public static func needsEscape(_ scalar: Unicode.Scalar) -> Bool {
        switch scalar.value {
        case 0x00...0x1F, 0x7F...0x9F:
            true
        case 0x061C, 0x200E, 0x200F, 0x202A...0x202E, 0x2066...0x2069:
            true
        default:
            false
        }
    }
}
