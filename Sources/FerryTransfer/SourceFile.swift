import FerrySystem
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
            /// A name that is not valid UTF-8: names travel as UTF-8 (PROTOCOL.md), so it cannot be offered.
            case undecodableName
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
        var folders: [String] = []
        return try collect(paths, skipped: &skipped, folders: &folders)
    }

    /// `collect(_:skipped:)`, and in `folders` the folders of directories sent whole that no file sent creates, named
    /// as their files are ("album/empty"): the offer's folders section (PROTOCOL.md 11.3). At most
    /// `Limits.maxOfferFolders` (`tooManyFiles` beyond).
    public static func collect(_ paths: [String], skipped: inout [Skipped], folders: inout [String])
        throws(TransferError) -> [SourceFile]
    {
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
                    try add(
                        SourceFile(
                            path: (path.hasSuffix("/") ? path : path + "/") + relative, name: base + "/" + relative))
                }
                skipped += listing.skipped.map { Skipped(name: base + "/" + $0.name, kind: $0.kind) }
                folders += listing.folders.map { base + "/" + $0 }
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
        guard folders.count <= Limits.maxOfferFolders else {
            throw .tooManyFolders(folders.count, limit: Limits.maxOfferFolders)
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
        // The first component too long, counted in one pass over the bytes (no array of substrings per path: 1% of
        // a sender's user time with 1000 files named one by one).
        var current = 0
        for byte in path.utf8 {
            if byte != UInt8(ascii: "/") {
                current += 1
            } else if current > longestName {
                break
            } else {
                current = 0
            }
        }
        if current > longestName { throw .nameTooLong(path, bytes: current, limit: longestName) }
    }

    /// Regular files under a directory, as sorted relative paths, and the symbolic links (not followed), special
    /// files and names that are not valid UTF-8 skipped. `directory` itself may be a symbolic link (the user named it); nothing below it is followed.
    /// An entry that vanishes while it is listed is left out; a subdirectory that cannot be opened or listed fails
    /// the whole collection (`notReadable`), rather than sending the folder without the files it holds.
    ///
    /// Why not `FileManager.enumerator`: `URL.resourceValues(forKeys:)` for each entry took 17 % of a sender's CPU
    /// for a folder of 1000 small files; one `fstatat` per entry, relative to the open directory, is a system call.
    ///
    /// `folders` are the relative paths of the folders under it in which nothing is sent and that have no subfolder
    /// (empty, or holding only skipped entries): creating them recreates every folder under it that no file sent
    /// creates (PROTOCOL.md 11.3, the folders section).
    static func regularFiles(under directory: String) throws(TransferError) -> (
        files: [String], skipped: [Skipped], folders: [String]
    ) {
        func unreadable(_ path: String, _ error: SystemError) -> TransferError {
            .notReadable(path, reason: "cannot list the directory: \(error.errno)")
        }
        var files: [String] = []
        var skipped: [Skipped] = []
        var folders: [String] = []
        func walk(_ handle: DirectoryHandle, _ prefix: String, _ shownPath: String) throws(TransferError) {
            let names: [String]
            do {
                let listing = try handle.listing()
                names = listing.names
                skipped += listing.undecodable.map { Skipped(name: prefix + $0, kind: .undecodableName) }
            } catch { throw unreadable(shownPath, error) }
            let before = (files.count, folders.count)
            var hasSubfolder = false
            for name in names {
                let relative = prefix + name
                guard let status = try? handle.status(of: name) else { continue }  // gone since the listing
                switch status.kind {
                case .regular:
                    files.append(relative)
                case .symlink:
                    skipped.append(Skipped(name: relative, kind: .symbolicLink))
                case .other:
                    skipped.append(Skipped(name: relative, kind: .special))
                case .directory:
                    hasSubfolder = true
                    let path = shownPath + "/" + name
                    let subdirectory: DirectoryHandle
                    do { subdirectory = try handle.subdirectory(name, create: false) } catch {
                        throw unreadable(path, error)
                    }
                    defer { subdirectory.close() }
                    try walk(subdirectory, relative + "/", path)
                }
            }
            // A leaf with no file sent: the folder itself must be created (not the root: it is DIR).
            if !prefix.isEmpty, !hasSubfolder, (files.count, folders.count) == before {
                folders.append(String(prefix.dropLast()))
            }
        }
        // "DIR/." opens what DIR names, a symbolic link to a directory included (DirectoryHandle refuses a link as
        // the last component); the messages name DIR.
        let root: DirectoryHandle
        do { root = try DirectoryHandle.open(path: directory + "/.", createIfMissing: false) } catch {
            throw unreadable(directory, error)
        }
        defer { root.close() }
        try walk(root, "", directory.hasSuffix("/") ? String(directory.dropLast()) : directory)
        return (files.sorted(), skipped.sorted { $0.name < $1.name }, folders.sorted())
    }
}
