import FerryWire

/// What can go wrong when starting a transfer, for a person: each says what happened and what to do.
public enum TransferError: Error, Equatable, Sendable, CustomStringConvertible {
    /// A file name given to send was the empty string.
    case emptyPath
    /// A path longer than the system takes (`limit` bytes, `PATH_MAX` less its terminating zero).
    case pathTooLong(String, bytes: Int, limit: Int)
    /// A path with one name in it longer than the system takes (`limit` bytes, `NAME_MAX`).
    case nameTooLong(String, bytes: Int, limit: Int)
    case fileNotFound(String)
    case notReadable(String, reason: String)
    case duplicateName(String, first: String, second: String)
    case nothingToSend
    case tooManyFiles(Int, limit: Int)
    /// The peer's session runs no transfer engine (e.g. `ferry chat`).
    case peerCannotReceive(String)
    case notConnected(String)
    /// The receive directory cannot be used.
    case receiveDirectory(String)
    case cancelled

    public var description: String {
        switch self {
        case .emptyPath:
            "an empty file name was given; name a file or directory to send."
        case .pathTooLong(let path, let bytes, let limit):
            "\(Self.shown(path)): the path is too long (\(bytes) bytes; at most \(limit)); shorten it, or send from "
                + "a directory nearer the file."
        case .nameTooLong(let path, let bytes, let limit):
            "\(Self.shown(path)): a name in the path is too long (\(bytes) bytes; at most \(limit)); check the path."
        case .fileNotFound(let path):
            "\(Self.shown(path)): no such file or directory; check the path."
        case .notReadable(let path, let reason):
            "\(Self.shown(path)): cannot be read (\(reason))."
        case .duplicateName(let name, let first, let second):
            "\(Self.shown(first)) and \(Self.shown(second)) would both be sent as \"\(Self.shown(name))\"; send them in "
                + "separate runs or rename one."
        case .nothingToSend:
            "There is nothing to send: the directories named contain no regular files."
        case .tooManyFiles(let count, let limit):
            "\(count) files are more than one transfer can carry (\(limit)); send fewer at a time, or archive them."
        case .peerCannotReceive(let name):
            "\(name) does not receive files (it is not running `ferry receive`)."
        case .notConnected(let name):
            "\(name) is not connected."
        case .receiveDirectory(let text):
            text
        case .cancelled:
            "The transfer was cancelled."
        }
    }
}

extension TransferError {
    /// The longest path or name an error message shows whole, in characters.
    public static let longestShown = 80

    /// `text` as a message shows it: whole up to `longestShown` characters; longer, its start and end around
    /// "...", with its length, so that a 5000-character path does not fill the screen but can still be recognised.
    public static func shown(_ text: String) -> String {
        guard text.count > longestShown else { return text }
        let half = (longestShown - 3) / 2
        return "\(text.prefix(half))...\(text.suffix(half)) (\(text.count) characters)"
    }
}
