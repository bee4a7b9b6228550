import Foundation

/// Where `ferry receive` puts files when `--into` is not given: the user's download directory.
///
/// Desktops record it in `~/.config/user-dirs.dirs` (xdg-user-dirs), as a shell assignment such as
/// `XDG_DOWNLOAD_DIR="$HOME/Téléchargements"`; a localised system does not call it `Downloads`. The file is read,
/// never sourced: only the forms xdg-user-dirs writes are accepted (`"$HOME/..."` or an absolute path, in double
/// quotes, with `\"`, `\\`, `\$` and `` \` `` escapes). Anything else falls back to `~/Downloads`.
public enum DownloadDirectory {
    /// The download directory for this environment: `$XDG_CONFIG_HOME/user-dirs.dirs` (else
    /// `$HOME/.config/user-dirs.dirs`), then `$HOME/Downloads`. `readFile` returns a file's text or nil.
    public static func resolve(
        environment: [String: String],
        readFile: (String) -> String? = { try? String(contentsOfFile: $0, encoding: .utf8) }
    ) -> String {
        let home = homeDirectory(environment)
        let configHome = environment["XDG_CONFIG_HOME"].flatMap { $0.hasPrefix("/") ? $0 : nil } ?? home + "/.config"
        if let text = readFile(configHome + "/user-dirs.dirs"), let path = parseUserDirs(text, home: home) {
            return path
        }
        return home == "/" ? "/Downloads" : home + "/Downloads"
    }

    /// `$HOME` when it is an absolute path, else the account's home directory.
    static func homeDirectory(_ environment: [String: String]) -> String {
        var home = environment["HOME"].flatMap { $0.hasPrefix("/") ? $0 : nil } ?? NSHomeDirectory()
        while home.count > 1, home.hasSuffix("/") {
            home.removeLast()
        }
        return home
    }

    /// The `XDG_DOWNLOAD_DIR` of a `user-dirs.dirs` text, with `$HOME` replaced by `home`; nil when the line is
    /// missing or not in a form xdg-user-dirs writes. The last assignment wins, as in a shell.
    public static func parseUserDirs(_ text: String, home: String) -> String? {
        var result: String?
        for rawLine in text.split(whereSeparator: \.isNewline) {
            var line = Substring(rawLine.drop { $0 == " " || $0 == "\t" })
            if line.hasPrefix("export ") {
                line = line.dropFirst("export ".count).drop { $0 == " " }
            }
            guard line.hasPrefix("XDG_DOWNLOAD_DIR=") else {
                continue
            }
            let value = line.dropFirst("XDG_DOWNLOAD_DIR=".count)
            guard let unquoted = unquote(value), let path = expand(unquoted, home: home) else {
                result = nil
                continue
            }
            result = path
        }
        return result
    }

    /// The text between double quotes with its escapes resolved; nil unless the value is one quoted string
    /// (optionally followed by spaces and a comment) with no unescaped `$` other than a leading `$HOME`.
    private static func unquote(_ value: Substring) -> String? {
        guard value.first == "\"" else {
            return nil
        }
        var output = ""
        var escaped = false
        var index = value.index(after: value.startIndex)
        while index < value.endIndex {
            let character = value[index]
            index = value.index(after: index)
            if escaped {
                guard "\"\\$`".contains(character) else {
                    return nil
                }
                output.append(character == "$" ? "\u{0}" : character)
                escaped = false
            } else if character == "\\" {
                escaped = true
            } else if character == "\"" {
                let rest = value[index...].drop { $0 == " " || $0 == "\t" }
                guard rest.isEmpty || rest.first == "#" else {
                    return nil
                }
                return output
            } else if character == "`" {
                return nil
            } else {
                output.append(character)
            }
        }
        return nil
    }

    /// Replaces a leading `$HOME` (or `${HOME}`); the result must be an absolute path without other variables.
    /// An escaped `\$` was kept as NUL by `unquote` and becomes a literal `$` here.
    private static func expand(_ text: String, home: String) -> String? {
        var path = text
        for variable in ["$HOME", "${HOME}"] where path == variable || path.hasPrefix(variable + "/") {
            path = (home == "/" ? "" : home) + path.dropFirst(variable.count)
            if path.isEmpty {
                path = "/"
            }
            break
        }
        guard path.hasPrefix("/"), !path.contains("$") else {
            return nil
        }
        return path.replacingOccurrences(of: "\u{0}", with: "$")
    }
}
