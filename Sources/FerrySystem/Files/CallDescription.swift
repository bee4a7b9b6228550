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
    ///
    /// One pass over contiguous UTF-8 (a native string's storage): it runs for every name of every directory
    /// operation, a dozen a received file, where `UTF8View.contains` cost a few thousand instructions a call.
    static func isSingleComponent(_ name: String) -> Bool {
        func check(_ bytes: some Collection<UInt8>) -> Bool {
            var count = 0
            var dots = 0
            for byte in bytes {
                if byte == 0x2F || byte == 0 { return false }
                if byte == 0x2E { dots += 1 }
                count += 1
            }
            return count > 0 && !(dots == count && count <= 2)
        }
        return name.utf8.withContiguousStorageIfAvailable { check($0) } ?? check(name.utf8)
    }

    /// `directory/name` without a doubled slash.
    static func join(_ directory: String, _ name: String) -> String {
        directory.hasSuffix("/") ? directory + name : directory + "/" + name
    }
}
