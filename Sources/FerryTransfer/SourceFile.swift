import Foundation
import FerryWire

/// A local file to send and the name it has inside the transfer.
public struct SourceFile: Sendable, Equatable {
    /// Where it is on this machine.
    public var path: String
    /// Its relative path inside the transfer ("photo.jpg", or "album/2026/photo.jpg" for a directory sent whole).
    public var name: String

    /// The file at `path`, sent as `name`.
    public init(path: String, name: String) {
        self.path = path
        self.name = name
    }

    /// The files named on a command line: a file is sent under its base name; a directory is sent whole, each
    /// regular file under "directory/relative/path" (symbolic links and special files inside it are skipped).
    /// Throws when a path is empty, too long, missing or not a file or directory, when two files would get the same
    /// name, when nothing is left to send, or when there are more than `Limits.maxOfferFiles` files.
    public static func collect(_ paths: [String]) throws(TransferError) -> [SourceFile] {
        var skipped: [Skipped] = []
        return try collect(paths, skipped: &skipped)
    }

    /// An entry of a directory sent whole that is not sent: its name inside the transfer and what it is.
    public struct Skipped: Sendable, Equatable {
        /// What the skipped entry is.
        public enum Kind: String, Sendable {
            case symbolicLink
            case special
        }
        /// Its path inside the transfer, as it would have been offered.
        public var name: String
        /// A symbolic link or a special file (device, socket, FIFO).
        public var kind: Kind

        /// An entry left out of a directory sent whole.
        public init(name: String, kind: Kind) {
            self.name = name
            self.kind = kind
        }
    }

    /// `collect(_:)`, and the symbolic links and special files it skipped inside directories, in `skipped`.
    public static func collect(_ paths: [String], skipped: inout [Skipped]) throws(TransferError) -> [SourceFile] {
        var result: [SourceFile] = []
        var names: [String: String] = [:]
        func add(_ file: SourceFile) throws(TransferError) {
            if let other = names[file.name] {
                throw .duplicateName(file.name, first: other, second: file.path)
            }
            names[file.name] = file.path
            result.append(file)
        }
        for path in paths {
            try checkLength(path)
            // stat(2) and access(2) directly: FileManager's fileExists and isReadableFile cost several times as
            // much per file, which a send of thousands of files named one by one pays before its offer.
            var status = stat()
            guard stat(path, &status) == 0 else { throw .fileNotFound(path) }
            let base = baseName(of: path)
            if status.st_mode & S_IFMT == S_IFDIR {
                let listing = try regularFiles(under: path)
                for relative in listing.files {
                    try add(SourceFile(path: path + "/" + relative, name: base + "/" + relative))
                }
                skipped += listing.skipped.map { Skipped(name: base + "/" + $0.name, kind: $0.kind) }
            } else {
                guard access(path, R_OK) == 0 else {
                    throw .notReadable(path, reason: "permission denied")
                }
                try add(SourceFile(path: path, name: base))
            }
        }
        guard !result.isEmpty else { throw .nothingToSend }
        guard result.count <= Limits.maxOfferFiles else {
            throw .tooManyFiles(result.count, limit: Limits.maxOfferFiles)
        }
        return result
    }

    /// The name `path` is sent under: the last component of the standardized path. A path whose last component is a
    /// plain name ("dir/photo.jpg", "photo.jpg/", "/a/../b") gives that name by splitting the text; ".", ".." and "/"
    /// ask Foundation (`standardizedFileURL`, which also resolves them against the working directory).
    ///
    /// Why not always Foundation: `URL(fileURLWithPath:)` stats the path to learn whether it is a directory and
    /// standardizing allocates, about as much as the rest of collecting a file; a send of thousands of files
    /// named one by one paid it for each before connecting.
    static func baseName(of path: String) -> String {
        if let last = path.split(separator: "/", omittingEmptySubsequences: true).last, last != ".", last != ".." {
            return String(last)
        }
        return URL(fileURLWithPath: path).standardizedFileURL.lastPathComponent
    }

    /// The longest path the system takes, in bytes (`PATH_MAX` counts the terminating zero).
    public static let longestPath = 4095
    /// The longest name of one file or directory, in bytes (`NAME_MAX`).
    public static let longestName = 255

    /// An empty path, or one the system would refuse as too long (ENAMETOOLONG, which `fileExists` reports as
    /// "missing"), is named for what it is.
    private static func checkLength(_ path: String) throws(TransferError) {
        guard !path.isEmpty else { throw .emptyPath }
        let bytes = path.utf8.count
        guard bytes <= longestPath else { throw .pathTooLong(path, bytes: bytes, limit: longestPath) }
        if let name = path.split(separator: "/").first(where: { $0.utf8.count > longestName }) {
            throw .nameTooLong(path, bytes: name.utf8.count, limit: longestName)
        }
    }

    /// Regular files under a directory, as sorted relative paths, and the symbolic links (not followed) and special
    /// files skipped.
    private static func regularFiles(under directory: String) throws(TransferError) -> (
        files: [String], skipped: [Skipped]
    ) {
        let root = URL(fileURLWithPath: directory)
        guard
            let enumerator = FileManager.default.enumerator(
                at: root, includingPropertiesForKeys: [.isRegularFileKey, .isSymbolicLinkKey], options: [])
        else { throw .notReadable(directory, reason: "cannot list the directory") }
        let rootLength = root.standardizedFileURL.path.count + 1
        var files: [String] = []
        var skipped: [Skipped] = []
        for case let url as URL in enumerator {
            let keys: Set<URLResourceKey> = [.isRegularFileKey, .isSymbolicLinkKey, .isDirectoryKey]
            guard let values = try? url.resourceValues(forKeys: keys) else { continue }
            let full = url.standardizedFileURL.path
            guard full.count > rootLength else { continue }
            let relative = String(full.dropFirst(rootLength))
            if values.isSymbolicLink == true {
                skipped.append(Skipped(name: relative, kind: .symbolicLink))
            } else if values.isRegularFile == true {
                files.append(relative)
            } else if values.isDirectory != true {
                skipped.append(Skipped(name: relative, kind: .special))
            }
        }
        return (files.sorted(), skipped.sorted { $0.name < $1.name })
    }
}
