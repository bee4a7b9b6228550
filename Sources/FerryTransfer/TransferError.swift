import FerryWire

/// What can go wrong when starting a transfer, for a person: each says what happened and what to do.
public enum TransferError: Error, Equatable, Sendable, CustomStringConvertible {
    /// A file name given to send was the empty string.
    case emptyPath
    /// A path longer than the system takes (`limit` bytes, `PATH_MAX` less its terminating zero).
    case pathTooLong(String, bytes: Int, limit: Int)
    /// A path with one name in it longer than the system takes (`limit` bytes, `NAME_MAX`).
    case nameTooLong(String, bytes: Int, limit: Int)
    /// A path given to send does not exist.
    case fileNotFound(String)
    /// A file or directory to send cannot be read (or is not a regular file).
    case notReadable(String, reason: String)
    /// Two entries would be sent under one name.
    case duplicateName(String, first: String, second: String)
    /// No entry to send (nothing given, or directories without regular files).
    case nothingToSend
    /// More entries than one offer carries (`Limits.maxOfferFiles`).
    case tooManyFiles(Int, limit: Int)
    /// The peer's session runs no transfer engine (e.g. `ferry chat`).
    case peerCannotReceive(String)
    /// The peer's ID is in the range kept for peers of other protocols (`PeerID.isForeign`): an older ferry that
    /// picked one; it takes no transfer until it runs again with another ID.
    case foreignRangePeerID(String)
    /// A peer to send to is not connected.
    case notConnected(String)
    /// The receive directory cannot be used.
    case receiveDirectory(String)
    /// The transfer was cancelled (the engine stopped, or the task was cancelled).
    case cancelled
    /// More empty folders than one offer carries (`Limits.maxOfferFolders`).
    case tooManyFolders(Int, limit: Int)
    /// The offer would not fit in one frame (`Limits.maxFramePayload`): too many long names, of files or folders.
    case offerTooLarge(String)
    /// A payload's name (or media type) could not be offered: the receiver would refuse it (PROTOCOL.md 11.9).
    case invalidPayloadName(String, reason: String)

    /// What went wrong, for a person, and what to do.
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
        case .foreignRangePeerID(let name):
            "\(name) uses a peer ID of the range kept for other protocols (an older ferry picks one once in 4 billion"
                + " runs); restart ferry there to get another."
        case .notConnected(let name):
            "\(name) is not connected."
        case .receiveDirectory(let text):
            text
        case .cancelled:
            "The transfer was cancelled."
        case .tooManyFolders(let count, let limit):
            "\(count) empty folders are more than one transfer can carry (\(limit)); send fewer at a time, or archive "
                + "them."
        case .offerTooLarge(let reason):
            "the names of the files and folders are too long to offer in one transfer (\(reason)); send fewer at a "
                + "time, or archive them."
        case .invalidPayloadName(let name, let reason):
            "the payload \"\(Self.shown(name))\" cannot be offered (\(reason)); give it a relative name such as "
                + "\"photo.jpg\" and a media type such as \"image/jpeg\" (printable ASCII, no spaces), or none."
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
