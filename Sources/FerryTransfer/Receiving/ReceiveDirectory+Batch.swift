import FerryStateMachines
import FerrySystem
import Glibc

/// One staged file to publish in a batch (`ReceiveDirectory.publish(_:syncEachFile:)`); the fields are those of
/// `publish(key:components:permissions:modificationTime:staged:size:digest:)`.
public struct Publication: Sendable {
    /// The staged file's key (its name in the staging folder).
    public var key: String
    /// The name to publish under, one path component each, relative to the receive directory.
    public var components: [String]
    /// The mode the published file gets (masked: never group- or other-writable).
    public var permissions: UInt16
    /// The modification time the published file gets.
    public var modificationTime: (seconds: Int64, nanoseconds: UInt32)
    /// The staged file, locked and open, when the caller holds it (else it is opened by its key).
    public var staged: RegularFile?
    /// The verified size: a staged file of another size is not published.
    public var size: UInt64?
    /// The verified file digest and its chunk size, for the "already there (identical)" check of a taken name.
    public var digest: (bytes: [UInt8], chunkSize: Int)?
    /// The sender's device ID (hex) when its offer had the flag `replaces` (PROTOCOL.md 11.10 rule 11): the file may
    /// take the place of the one this sender delivered under its name, unchanged since, and its delivery is recorded.
    public var deliveredBy: String?

    /// A file to publish; the fields as named.
    public init(
        key: String, components: [String], permissions: UInt16, modificationTime: (Int64, UInt32),
        staged: RegularFile? = nil, size: UInt64? = nil, digest: (bytes: [UInt8], chunkSize: Int)? = nil
    ) {
        self.key = key
        self.components = components
        self.permissions = permissions
        self.modificationTime = modificationTime
        self.staged = staged
        self.size = size
        self.digest = digest
    }
}

/// What became of one file of a batch.
public struct PublicationOutcome: Sendable {
    /// The published file, or why it was not published.
    public var result: Result<PublishedFile, SystemError>
    /// The sync of its data failed: the staged data should go, since pages whose writeback failed can stay cached
    /// and a resume would hash the cache, match, and publish bytes the disk may not hold.
    public var syncFailed = false
    /// Published in place of the earlier version its sender delivered (`Publication.deliveredBy`).
    public var replaced = false
}

extension ReceiveDirectory {
    /// Publishes a batch of staged files so that every file reported published survives a crash (a power loss just
    /// after the report finds it under its name, with its bytes, mode and modification time). In this order:
    /// 1. each file's mode and modification time are set (`fchmod`, `futimens`, through its open descriptor);
    /// 2. the data and metadata of the batch are synced: one `syncfs` for several files (`syncBeforePublish`), or
    ///    an `fsync` per file with `syncEachFile`;
    /// 3. each file is renamed into place (`renameat2`, RENAME_NOREPLACE), creating its intermediate directories;
    /// 4. every directory on the path of a file renamed (the receive directory, each subfolder down to the file's
    ///    own, those just created and those that were there) is synced once (`fsync`): its entry for the file, and
    ///    for the subfolder below it, are then on disk.
    /// Only after all four does this return, and only then may a caller report the files. A file whose directory
    /// sync failed fails (it is in place, but its name may not survive a crash). Returns one outcome per file, in
    /// order; every `staged` descriptor is closed.
    ///
    /// Why the order: mode and time set after the sync are metadata no sync has covered (after a crash the file
    /// could be 0600 with the staging time); a rename not followed by an `fsync` of its directory lives in the
    /// journal until the next commit, so a power loss just after "published" could put the file back in the staging
    /// folder; a subfolder created for the file is itself a name in its parent. One directory sync per directory per
    /// batch keeps the cost per file small: on ext4 the first commits the journal and the others find little to do.
    public func publish(_ batch: [Publication], syncEachFile: Bool = false) -> [PublicationOutcome] {
        // Every entry gets its own outcome below; this one is never returned.
        let unset = SystemError(call: "publish", errno: Errno(rawValue: EIO))
        var outcomes = batch.map { _ in PublicationOutcome(result: .failure(unset)) }
        // 1. Mode and time, before anything is synced.
        var prepared: [(index: Int, file: RegularFile, components: [String])] = []
        for (index, publication) in batch.enumerated() {
            do throws(SystemError) {
                let (file, components) = try prepare(publication)
                prepared.append((index, file, components))
            } catch {
                outcomes[index].result = .failure(error)
            }
        }
        // 2. Data and metadata.
        var synced: [(index: Int, file: RegularFile, components: [String])] = []
        func syncFailed(_ entry: (index: Int, file: RegularFile, components: [String]), _ error: SystemError) {
            entry.file.close()
            outcomes[entry.index] = PublicationOutcome(result: .failure(error), syncFailed: true)
        }
        if syncEachFile {
            for entry in prepared {
                do throws(SystemError) {
                    try entry.file.sync(dataOnly: false)
                    recorder?(.syncFile(key: batch[entry.index].key))
                    synced.append(entry)
                } catch {
                    syncFailed(entry, error)
                }
            }
        } else {
            do throws(SystemError) {
                let failed = try syncBeforePublish(prepared.map(\.file))
                for (position, entry) in prepared.enumerated() {
                    if let error = failed[position] { syncFailed(entry, error) } else { synced.append(entry) }
                }
            } catch {
                for entry in prepared { syncFailed(entry, error) }
            }
        }
        // 3. Renames, each directory opened once for the batch.
        var directories = PublishingDirectories(root: root)
        defer { directories.close() }
        var paths: [Int: [String]] = [:]
        for entry in synced {
            let publication = batch[entry.index]
            do throws(SystemError) {
                defer { entry.file.close() }
                let (directory, path) = try directories.open(Array(entry.components.dropLast()))
                let written = try entry.file.status()
                let fileName = entry.components[entry.components.count - 1]
                let prefix = path.last.map { $0 + "/" } ?? ""
                // From closing the last writable descriptor until the rename, no child may be started in this
                // process: one started before would close its copy after the rename, and a watcher would see the
                // file closed again.
                var replaced = false
                let published = try SpawnFence.publishing { () throws(SystemError) -> PublishedFile in
                    entry.file.close()
                    return try rename(
                        publication.key, to: directory, fileName, prefix: prefix, written: written,
                        size: publication.size, digest: publication.digest, deliveredBy: publication.deliveredBy,
                        replaced: &replaced)
                }
                outcomes[entry.index].result = .success(published)
                outcomes[entry.index].replaced = replaced
                paths[entry.index] = [""] + path
            } catch {
                outcomes[entry.index].result = .failure(error)
            }
        }
        // 4. Every directory on those paths, once, deepest first.
        var failedDirectories: [String: SystemError] = [:]
        for path in Set(paths.values.joined()).sorted(by: { $0.utf8.count > $1.utf8.count }) {
            do throws(SystemError) {
                try directories.sync(path)
                recorder?(.syncDirectory(path.isEmpty ? "." : path))
            } catch {
                failedDirectories[path] = error
            }
        }
        for (index, path) in paths {
            guard let failure = path.lazy.compactMap({ failedDirectories[$0] }).first,
                case .success(let published) = outcomes[index].result
            else { continue }
            let call =
                "\(failure.call) (\(String(reflecting: published.name)) is in place, but its name may not survive a "
                + "crash)"
            outcomes[index].result = .failure(SystemError(call: call, errno: failure.errno))
        }
        return outcomes
    }

    /// Step 1 of a batch for one file: checks its key and name, opens the staged file unless it is open, and sets
    /// its mode and modification time. Returns the open file and the name's components in NFC. The file is closed
    /// when this throws.
    private func prepare(_ publication: Publication) throws(SystemError) -> (RegularFile, [String]) {
        do throws(SystemError) {
            try checkKey(publication.key)
        } catch {
            publication.staged?.close()
            throw error
        }
        let components = publication.components.map(Self.publishedForm)
        let joined = components.joined(separator: "/")
        guard !components.isEmpty, case .success(let checked) = NameValidator.components(of: joined),
            checked == components
        else {
            publication.staged?.close()
            let call = "publish(\(String(reflecting: joined))) in \(path) (not a valid received name)"
            throw SystemError(call: call, errno: .invalidArgument)
        }
        let staged: RegularFile
        if let open = publication.staged {
            staged = open
        } else {
            staged = try staging.openFile(publication.key, writable: true)
        }
        do throws(SystemError) {
            try staged.setPermissions(publication.permissions & 0o755)
            try staged.setModificationTime(
                seconds: publication.modificationTime.seconds, nanoseconds: publication.modificationTime.nanoseconds)
            recorder?(.attributes(key: publication.key))
        } catch {
            staged.close()
            throw error
        }
        return (staged, components)
    }
}

/// The directories a batch publishes into, each opened (and created if missing) once, by the path it was asked
/// for; and by the spelling it has on disk, for the directory syncs.
struct PublishingDirectories {
    private let root: DirectoryHandle
    /// By the components asked for, joined with "/": the handle and the path as spelled on disk.
    private var opened: [String: (handle: DirectoryHandle, spelled: String)] = [:]
    /// By the path as spelled on disk ("" is the receive directory).
    private var bySpelling: [String: DirectoryHandle] = [:]

    init(root: DirectoryHandle) {
        self.root = root
        bySpelling[""] = root
    }

    /// The directory at `components` below the receive directory, created where missing (never following a
    /// symlink: see `DirectoryHandle.subdirectory`), and the path of each directory on the way, as spelled on disk
    /// ("a", "a/b"); the receive directory itself is not in it.
    mutating func open(_ components: [String]) throws(SystemError) -> (DirectoryHandle, [String]) {
        var directory = root
        var spelled = ""
        var path: [String] = []
        for depth in components.indices {
            let asked = components[...depth].joined(separator: "/")
            if let known = opened[asked] {
                (directory, spelled) = known
            } else {
                let spelling = ReceiveDirectory.existingSpelling(of: components[depth], in: directory)
                let next = spelled.isEmpty ? spelling : spelled + "/" + spelling
                if let same = bySpelling[next] {
                    directory = same
                } else {
                    directory = try directory.subdirectory(spelling, create: true)
                    bySpelling[next] = directory
                }
                spelled = next
                opened[asked] = (directory, spelled)
            }
            path.append(spelled)
        }
        return (directory, path)
    }

    /// Syncs the directory at `spelled` (opened by `open`).
    func sync(_ spelled: String) throws(SystemError) {
        guard let directory = bySpelling[spelled] else {
            throw SystemError(call: "fsync(\(String(reflecting: spelled))) (not opened)", errno: .badFileDescriptor)
        }
        try directory.sync()
    }

    /// Closes every directory opened (not the receive directory).
    func close() {
        for (spelled, handle) in bySpelling where !spelled.isEmpty { handle.close() }
    }
}
