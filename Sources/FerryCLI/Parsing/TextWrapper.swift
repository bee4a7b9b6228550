/// Wraps help text to the width of a classic terminal, with hanging indents.
///
/// Help is written for 80 columns, as swift-argument-parser does when it cannot ask the terminal; a fixed width
/// also keeps the snapshot tests independent of the terminal they run in.
enum TextWrapper {
    static let width = 80

    /// Wraps `text`, whose first line starts after `prefix` and whose further lines start at column `indent`.
    ///
    /// Line breaks in `text` are kept; a line that fits is kept as written, a longer one is wrapped at spaces,
    /// continuing at `indent` plus the line's own leading spaces. A word longer than the line gets a line of its
    /// own.
    static func wrap(_ text: String, prefix: String = "", indent: Int = 0, width: Int = TextWrapper.width) -> String {
        var output: [String] = []
        for (lineIndex, line) in text.split(separator: "\n", omittingEmptySubsequences: false).enumerated() {
            let start = lineIndex == 0 ? prefix : String(repeating: " ", count: indent)
            if line.allSatisfy({ $0 == " " }) {
                output.append(lineIndex == 0 ? prefix : "")
            } else if start.count + line.count <= width {
                // Fits: keep it as written, with its inner spacing (aligned command lists).
                output.append(start + line)
            } else {
                let leading = line.prefix(while: { $0 == " " }).count
                let words = line.split(separator: " ").map(String.init)
                let prefix = start + String(repeating: " ", count: leading)
                let indentText = String(repeating: " ", count: indent + leading)
                output.append(wrap(items: words, prefix: prefix, indent: indentText, width: width))
            }
        }
        return output.joined(separator: "\n")
    }

    /// Wraps whole `items` (words, or usage elements such as `[--timeout <seconds>]` that must not be split)
    /// separated by single spaces; the first line starts after `prefix`, further lines at column `indent`.
    static func wrap(items: [String], prefix: String, indent: Int, width: Int = TextWrapper.width) -> String {
        wrap(items: items, prefix: prefix, indent: String(repeating: " ", count: indent), width: width)
    }

    private static func wrap(items: [String], prefix: String, indent: String, width: Int = TextWrapper.width)
        -> String
    {
        var lines: [String] = []
        var current = prefix
        var currentHasItem = false
        for item in items {
            if currentHasItem, current.count + 1 + item.count > width {
                lines.append(current)
                current = indent
                currentHasItem = false
            }
            current += (currentHasItem ? " " : "") + item
            currentHasItem = true
        }
        lines.append(current)
        return lines.joined(separator: "\n")
    }
}
