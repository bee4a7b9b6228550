extension SourceFile {
    /// The files of one folder as `ferry send FOLDER` offers them, without an offer's limits (`ferry hash FOLDER`):
    /// each regular file under `directory`, named "<folder name>/<relative path>" and sorted by that name, and the
    /// entries `collect(_:skipped:)` skips (symbolic links, not followed; special files; names that are not UTF-8).
    /// `directory` itself may be a symbolic link to a folder. Throws `notReadable` when a folder under it cannot be
    /// listed.
    /// `folders` are its empty folders as the send's offer names them (see `collect(_:skipped:folders:)`).
    public static func folder(_ directory: String) throws(TransferError) -> (
        files: [SourceFile], skipped: [Skipped], folders: [String]
    ) {
        let base = baseName(of: directory)
        let listing = try regularFiles(under: directory)
        let prefix = directory.hasSuffix("/") ? directory : directory + "/"
        return (
            listing.files.map { SourceFile(path: prefix + $0, name: base + "/" + $0) },
            listing.skipped.map { Skipped(name: base + "/" + $0.name, kind: $0.kind) },
            listing.folders.map { base + "/" + $0 }
        )
    }
}
