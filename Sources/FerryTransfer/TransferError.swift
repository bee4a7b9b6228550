import FerryWire

/// What can go wrong when starting a transfer, for a person: each says what happened and what to do.
public enum TransferError: Error, Equatable, Sendable, CustomStringConvertible {
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
        case .fileNotFound(let path):
            "\(path): no such file or directory; check the path."
        case .notReadable(let path, let reason):
            "\(path): cannot be read (\(reason))."
        case .duplicateName(let name, let first, let second):
            "\(first) and \(second) would both be sent as \"\(name)\"; send them in separate runs or rename one."
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
