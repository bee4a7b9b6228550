import FerryStateMachines
import FerrySystem
import FerryWire
import Glibc

/// Where a staged file went: published under a name, or dropped because that name already held the same bytes.
public enum PublishedFile: Equatable, Sendable {
    /// Renamed into place under this path, relative to the receive directory.
    case published(String)
    /// The directory already held a regular file with exactly these bytes under this path (the offered name or one
    /// of its numbered variants): the staged copy was removed and nothing changed in the directory.
    case identical(String)

    /// Whether the name already held these bytes (nothing new was published).
    public var isIdentical: Bool {
        if case .identical = self { true } else { false }
    }

    /// The path, relative to the receive directory, that holds the file now.
    public var name: String {
        switch self {
        case .published(let name), .identical(let name): name
        }
    }
}

extension ReceiveDirectory {
    /// Highest number tried for a taken name: "name (9999).ext".
    static let maximumVariant = 9999

    /// Publishes a staged file under `components` (already validated by `NameValidator`; checked again here, in
    /// NFC: see `publishedForm`): applies `permissions & 0o755` (the sender's permission bits, never setuid, setgid
    /// or sticky, and never writable by group or others, whatever the peer asks) and the modification time to the
    /// staged file, syncs it, creates the intermediate directories (each opened without following symlinks: a
    /// symlink planted in the directory is refused with an error, never followed), renames it into place with
    /// RENAME_NOREPLACE and syncs every directory on its path: a batch of one (`publish(_:syncEachFile:)`), durable
    /// when it returns. A taken name (or one whose NFD spelling is there) becomes "name (1).ext", "name (2).ext",
    /// ... up to 9999 (see `numberedName`). Returns the published path, relative to the directory
    /// ("photos/beach (1).jpg").
    /// - Throws: `SystemError`: EINVAL for an invalid key or name, ENOTDIR or ELOOP for a symlink on the way or a
    ///   file where a directory is needed, ESTALE when the staged name no longer holds the file written (it was
    ///   replaced), EEXIST when every variant is taken; the staged file stays in place.
    ///
    /// `size`, when given, is the size verified: a staged file of another size is not published (ESTALE).
    /// `staged`, when given, is the staged file already open: permissions and time are set through it and it is
    /// closed before the rename (closing a written descriptor after the rename would show the file to a watcher a
    /// second time; `SpawnFence` keeps a child of this process from holding a copy of it across the rename). Without
    /// it the staged file is opened by its key.
    public func publish(
        key: String, components: [String], permissions: UInt16, modificationTime: (Int64, UInt32),
        staged open: RegularFile? = nil, size: UInt64? = nil
    ) throws(SystemError) -> String {
        try publish(
            key: key, components: components, permissions: permissions, modificationTime: modificationTime,
            staged: open, size: size, digest: nil
        ).name
    }

    /// `publish(key:components:permissions:modificationTime:staged:)`, and with `digest` (the verified file digest
    /// of the staged file, PROTOCOL.md 11.7, and the chunk size it was computed with) a taken name whose regular
    /// file has the same size and the same file digest at that chunk size is the file itself: the staged copy is
    /// removed and `.identical(name)` returned, instead of publishing "name (1).ext" beside it. A taken name holding
    /// anything else (other bytes, a directory, a symlink: never followed) stays untouched and the next variant is
    /// tried, as without `digest`. The existing file is hashed only when its size matches.
    public func publish(
        key: String, components: [String], permissions: UInt16, modificationTime: (Int64, UInt32),
        staged open: RegularFile? = nil, size: UInt64? = nil, digest: (bytes: [UInt8], chunkSize: Int)?
    ) throws(SystemError) -> PublishedFile {
        let publication = Publication(
            key: key, components: components, permissions: permissions, modificationTime: modificationTime,
            staged: open, size: size, digest: digest)
        return try publish([publication])[0].result.get()
    }

    /// The rename of `publish`: checks that `key` still names the file written, then renames it to `fileName` or
    /// the first free variant in `directory` (or drops it as `.identical`).
    func rename(
        _ key: String, to directory: DirectoryHandle, _ fileName: String, prefix: String,
        written: FerrySystem.FileStatus,
        size: UInt64?, digest: (bytes: [UInt8], chunkSize: Int)?, deliveredBy sender: String? = nil,
        replaced: inout Bool
    ) throws(SystemError) -> PublishedFile {
        var hashed: Set<String> = []
        /// Whether the taken `candidate` (or its NFD twin) already holds these bytes; the spelling found if so.
        func identical(_ candidate: String) -> String? {
            guard let digest else { return nil }
            for spelling in [candidate, Self.decomposedTwin(candidate)].compactMap({ $0 })
            where hashed.insert(spelling).inserted {
                if Self.holds(
                    spelling, in: directory, size: written.size, digest: digest.bytes, chunkSize: digest.chunkSize)
                {
                    return spelling
                }
            }
            return nil
        }
        // The rename goes by name: the name must still be the file that was written and verified, with the size that
        // was verified and nothing written to it since (same change time). A staged file replaced meanwhile (by a
        // symlink to a file elsewhere, say), cut or extended, is never published in its place.
        guard let named = try staging.status(of: key), named.kind == .regular, named.isUnchanged(since: written),
            size.map({ $0 == written.size }) ?? true
        else {
            let call = "publish \(String(reflecting: key)) in \(staging.path) (the staged file was replaced or changed)"
            throw SystemError(call: call, errno: Errno(rawValue: ESTALE))
        }

        for variant in 0...Self.maximumVariant {
            let candidate = variant == 0 ? fileName : Self.numberedName(fileName, variant)
            if Self.twinExists(of: candidate, in: directory) {  // looks the same: taken
                if let same = identical(candidate) { return try dropStaged(key, as: prefix + same) }
                continue
            }
            do {
                try staging.rename(key, to: directory, as: candidate, replace: false)
                recorder?(.rename(key: key, to: prefix + candidate))
                if let sender { recordDelivery(path: prefix + candidate, by: sender, status: written) }
                return .published(prefix + candidate)
            } catch let error where error.errno == .fileExists {
                if let same = identical(candidate) { return try dropStaged(key, as: prefix + same) }
                // A newer version from the sender that delivered the file there, unchanged since: put in its place
                // by one rename (the old file stays whole until then; see ReceiveDirectory+Replacing).
                if variant == 0, let sender, isDelivered(candidate, in: directory, path: prefix + candidate, by: sender)
                {
                    try staging.rename(key, to: directory, as: candidate, replace: true)
                    recorder?(.rename(key: key, to: prefix + candidate))
                    recordDelivery(path: prefix + candidate, by: sender, status: written)
                    replaced = true
                    return .published(prefix + candidate)
                }
                continue
            }
        }
        let call =
            "renameat2(\(String(reflecting: key)) in \(staging.path), \(String(reflecting: fileName)) in "
            + "\(directory.path)) (the name and its variants up to (\(Self.maximumVariant)) are all taken)"
        throw SystemError(call: call, errno: .fileExists)
    }

    /// The staged copy of a file the directory already holds is removed; the existing file stays as it is.
    private func dropStaged(_ key: String, as name: String) throws(SystemError) -> PublishedFile {
        try staging.removeFile(key)
        return .identical(name)
    }

    /// Whether `name` in `directory` is a regular file (not followed if a symlink) of `size` bytes whose file digest
    /// with chunks of `chunkSize` bytes is `digest`; with `chunkSize` 0, whose plain SHA-256 is `digest` (a file from
    /// a peer of another protocol, `FileVerification.sha256`/`.size`). Any error (gone, unreadable, not a regular
    /// file) counts as no.
    static func holds(_ name: String, in directory: DirectoryHandle, size: UInt64, digest: [UInt8], chunkSize: Int)
        -> Bool
    {
        guard let status = try? directory.status(of: name), status.kind == .regular, status.size == size,
            let file = try? directory.openFile(name, writable: false)
        else { return false }
        defer { file.close() }
        if chunkSize == 0 {
            let whole = SHA256Hasher()
            var offset: UInt64 = 0
            while offset < size {
                guard let bytes = try? file.read(count: Int(min(size - offset, 1 << 20)), at: offset), !bytes.isEmpty
                else { return false }
                whole.update(bytes)
                offset += UInt64(bytes.count)
            }
            guard (try? file.read(count: 1, at: size))?.isEmpty == true else { return false }  // it grew meanwhile
            return whole.finalize() == digest
        }
        let hasher = FileDigest()
        guard (try? hasher.add(chunksOf: file, from: 0, to: size, chunkSize: chunkSize)) == true else { return false }
        guard (try? file.read(count: 1, at: size))?.isEmpty == true else { return false }  // it grew meanwhile
        return hasher.finalize() == digest
    }

    /// The `variant`-th alternative of a taken `name`: " (n)" goes before the extension, which starts at the LAST
    /// dot ("archive.tar.gz" -> "archive.tar (1).gz", "photo.jpg" -> "photo (1).jpg"), unless the name starts
    /// with a dot and has no other ("`.bashrc`" -> "`.bashrc (1)`") or has no dot ("README" -> "README (1)").
    /// The part before the extension is shortened (whole Unicode scalars) so the result stays within 255 bytes.
    static func numberedName(_ name: String, _ variant: Int) -> String {
        let suffix = " (\(variant))"
        let limit = NameValidator.maximumComponentBytes
        var stem = Substring(name)
        var fileExtension: Substring = ""
        if let dot = name.lastIndex(of: "."), dot != name.startIndex {
            stem = name[..<dot]
            fileExtension = name[dot...]
        }
        if stem.utf8.count + suffix.utf8.count + fileExtension.utf8.count > limit,
            suffix.utf8.count + fileExtension.utf8.count > limit - 1
        {
            stem = Substring(name)  // an extension too long to keep: number the end of the whole name instead
            fileExtension = ""
        }
        var scalars = stem.unicodeScalars
        while scalars.count > 0, stem.utf8.count + suffix.utf8.count + fileExtension.utf8.count > limit {
            scalars.removeLast()
            stem = Substring(scalars)
        }
        return stem + suffix + fileExtension
    }
}
