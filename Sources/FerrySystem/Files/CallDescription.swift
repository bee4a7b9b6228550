/// Builds the `call` text of file-system `SystemError`s: which C call, on which name, in which directory.
///
/// Why: "No space left on device" alone does not say which of a hundred received files failed;
/// `openat("photo.jpg") in /tmp/in: No space left on device` does. Names are quoted with Swift's escaping, so a
/// control character in a name cannot reach a terminal raw.
enum CallDescription {
    /// `name` in double quotes, with quotes, backslashes and control characters escaped.
    static func quoted(_ name: String) -> String {
        String(reflecting: name)
    }

    /// `<function>("<name>") in <directory>`, plus a hint for errors whose C message misleads.
    static func call(_ function: String, _ name: String, in directory: String, _ errno: Errno) -> String {
        "\(function)(\(quoted(name))) in \(directory)\(hint(errno))"
    }

    /// `<function>("<path>")`, plus a hint.
    static func call(_ function: String, path: String, _ errno: Errno) -> String {
        "\(function)(\(quoted(path)))\(hint(errno))"
    }

    /// `<function>() on <path>`, for calls on an open file.
    static func call(_ function: String, on path: String) -> String {
        "\(function)() on \(path)"
    }

    /// ELOOP from an O_NOFOLLOW open reads "Too many levels of symbolic links": say what really happened.
    static func hint(_ errno: Errno) -> String {
        errno == .tooManySymbolicLinkLevels ? symlinkHint : ""
    }

    /// Added where an open refused a symbolic link (ELOOP, or ENOTDIR with O_DIRECTORY).
    static let symlinkHint = " (a symbolic link, never followed)"

    /// Whether `name` is one path component: not empty, not "." or "..", without "/" or NUL (a NUL would cut the
    /// C string short and name another file).
    static func isSingleComponent(_ name: String) -> Bool {
        let bytes = name.utf8
        guard !bytes.isEmpty, !bytes.contains(0x2F), !bytes.contains(0) else { return false }
        return !bytes.elementsEqual(".".utf8) && !bytes.elementsEqual("..".utf8)
    }

    /// `directory/name` without a doubled slash.
    static func join(_ directory: String, _ name: String) -> String {
        directory.hasSuffix("/") ? directory + name : directory + "/" + name
    }
}
