import FerryStateMachines
import FerrySystem
import Foundation
import Glibc
import Synchronization

/// The directory received files appear in, and its hidden staging folder `.ferry-staging` (mode 0700) on the
/// same file system. Watchers of the directory only ever see complete, verified files appear, each exactly once.
///
/// Why: payload is written to `.ferry-staging/<key>` (the key names the transfer and file, so a resumed transfer
/// finds its data again) and moved into place by one atomic, no-overwrite `renameat2` after the hash matched:
/// a program watching the directory never sees a partial file, and an existing file is never replaced (a taken
/// name gets a numbered variant). Names are walked one component at a time from the open directory without
/// following symlinks, so whatever name a peer sends, nothing outside the directory is touched.
public final class ReceiveDirectory: Sendable {
    /// The directory, as given to `init(path:)`.
    public let path: String
    let root: DirectoryHandle
    let staging: DirectoryHandle
    /// Keys of staged files claimed by a transfer of this process (see `StagedReservation`).
    let claims = Mutex<Set<String>>([])
    /// Set once creating a staged file without a name (O_TMPFILE, then `linkat`) was found not to work here: the
    /// file system lacks it, or /proc is missing. Staged files are then created by name.
    let linkedCreationUnsupported = Atomic<Bool>(false)
    /// Told each step of publishing that makes a file durable or visible, right after the call succeeded (tests
    /// record the order of the calls: a power loss cannot be made here, the order that survives one can be shown).
    let recorder: (@Sendable (PublishStep) -> Void)?

    /// Opens (creating it if missing; its parent must exist) the receive directory at `path`, and its staging
    /// folder. A symlink as `path`'s last component or as `.ferry-staging` is refused.
    public convenience init(path: String) throws(SystemError) {
        try self.init(path: path, recorder: nil)
    }

    /// `init(path:)`, telling `recorder` each step of publishing (see `PublishStep`).
    init(path: String, recorder: (@Sendable (PublishStep) -> Void)?) throws(SystemError) {
        self.path = path
        self.recorder = recorder
        var status = stat()
        let created = lstat(path, &status) != 0 && errno == ENOENT
        root = try DirectoryHandle.open(path: path, createIfMissing: true)
        if created {
            do throws(SystemError) {
                try Self.syncParent(of: path)
                recorder?(.syncDirectory(".."))
            } catch {
                root.close()
                throw error
            }
        }
        staging = try root.subdirectory(NameValidator.reservedName, create: true, permissions: 0o700)
    }

    /// The staged data for `key` (64 lowercase hex digits), created (mode 0600) if missing; returns the file,
    /// open for reading and writing, and the length already there.
    ///
    /// With `reservation`, its cross-process lock is taken first (if not yet held) and the file opened must be the
    /// locked one: the data of a transfer is only ever written into the staged file that transfer holds.
    /// - Throws: `SystemError`; EINVAL for a key that is not 64 lowercase hex digits; EBUSY when another transfer
    ///   (another `ferry receive` on this directory) holds the staged file; ESTALE when the name no longer holds the
    ///   locked file.
    public func stagedFile(key: String, holding reservation: StagedReservation? = nil) throws(SystemError) -> (
        file: RegularFile, existingLength: UInt64
    ) {
        try checkKey(key)
        if let reservation {
            guard try reservation.lockAcrossProcesses() else {
                // No path in this text: it goes to the sender.
                let call =
                    "lock the staged file (the same file from the same sender is being received by another transfer "
                    + "into this directory; send it again when that one has ended)"
                throw SystemError(call: call, errno: Errno(rawValue: EBUSY))
            }
        }
        // The descriptor the lock created the file with, if it did (staged ahead): no second open.
        let kept = reservation?.takeWritable()
        let file: RegularFile
        if let kept {
            file = kept
        } else {
            file = try staging.createFile(key, permissions: 0o600, exclusive: false)
        }
        do throws(SystemError) {
            let status = kept == nil ? file.statusAtOpen : try file.status()
            if let reservation, !reservation.isLockedFile(status) {
                let call = "open \(key) in \(staging.path) (the staged file was replaced)"
                throw SystemError(call: call, errno: Errno(rawValue: ESTALE))
            }
            return (file, status.size)
        } catch {
            file.close()
            throw error
        }
    }

    /// The length of the staged data for `key` without creating it: nil if there is none (or no regular file, or
    /// it cannot be examined, or `key` is not a key).
    public func stagedLength(key: String) -> UInt64? {
        guard Self.isKey(key), let status = try? staging.status(of: key), status.kind == .regular else { return nil }
        return status.size
    }

    /// Deletes the staged data for `key`, if any; errors (a missing file, an invalid key) are ignored.
    public func removeStaged(key: String) {
        guard Self.isKey(key) else { return }
        try? staging.removeFile(key)
    }

    /// Makes staged files durable before publishing a batch: one file -> `fsync` (its mode and time, set just
    /// before, are metadata `fdatasync` may leave out; for a file just written ext4 commits the same journal either
    /// way); several -> `syncfs` once, then each file's own writeback error is asked for
    /// (`RegularFile.checkWrittenBack`). Throws when the sync
    /// failed (every file of the batch fails); returns the files whose own writeback failed, by index.
    ///
    /// On ext4 (data=ordered) each `fdatasync` of a new file commits the journal, which waits for the dirty data of
    /// every file in the transaction anyway; one `syncfs` for a batch measured faster than a batch of
    /// `fdatasync`s (1000 files of 4-64 KiB: 110-128 MiB/s against 51-74 MiB/s).
    public func syncBeforePublish(_ files: [RegularFile]) throws(SystemError) -> [Int: SystemError] {
        switch files.count {
        case 0: return [:]
        case 1:
            try files[0].sync(dataOnly: false)
            recorder?(.syncFile(key: Self.stagedKey(of: files[0])))
            return [:]
        default:
            try staging.syncFileSystem()
            recorder?(.syncFileSystem)
            var failed: [Int: SystemError] = [:]
            for (index, file) in files.enumerated() {
                do throws(SystemError) { try file.checkWrittenBack() } catch { failed[index] = error }
            }
            return failed
        }
    }

    /// Removes staged files (named by a key) not modified for `age`, left by transfers that never resumed;
    /// returns how many. Errors are ignored: a file that cannot be removed now is tried again next time.
    @discardableResult
    public func removeStale(olderThan age: Duration = .seconds(7 * 24 * 3600), now: Date = Date()) -> Int {
        removeStaged(untouchedFor: age, now: now).files
    }

    /// Bytes available to this user on the directory's file system, or nil if that cannot be found out.
    public func availableBytes() -> UInt64? {
        try? root.availableBytes()
    }

    /// Closes the directory and the staging folder; later calls fail with EBADF. `deinit` closes too.
    public func close() {
        staging.close()
        root.close()
    }

    /// Syncs the directory that holds `path` (created just now: its name there must survive a crash as the files
    /// published in it do). Used for the receive directory when it is created here, and by a caller that created it
    /// (and its parents) before opening it.
    public static func syncParent(of path: String) throws(SystemError) {
        var trimmed = Substring(path)
        while trimmed.count > 1, trimmed.hasSuffix("/") { trimmed = trimmed.dropLast() }
        let parent: String
        if let slash = trimmed.lastIndex(of: "/") {
            parent = slash == trimmed.startIndex ? "/" : String(trimmed[..<slash])
        } else {
            parent = "."
        }
        let directory = try DirectoryHandle.open(path: parent, createIfMissing: false)
        defer { directory.close() }
        try directory.sync()
    }

    /// The key a staged file was opened under (the last component of its path), for `recorder`.
    static func stagedKey(of file: RegularFile) -> String {
        String(file.path.split(separator: "/").last ?? "")
    }

    /// Whether `key` is 64 lowercase hex digits (the only names created in the staging folder).
    static func isKey(_ key: String) -> Bool {
        func check(_ bytes: some Collection<UInt8>) -> Bool {
            bytes.count == 64 && bytes.allSatisfy { (0x30...0x39).contains($0) || (0x61...0x66).contains($0) }
        }
        return key.utf8.withContiguousStorageIfAvailable { check($0) } ?? check(key.utf8)
    }

    func checkKey(_ key: String) throws(SystemError) {
        guard Self.isKey(key) else {
            let call = "staged file \(String(reflecting: key)) in \(staging.path) (not a 64-digit hex key)"
            throw SystemError(call: call, errno: .invalidArgument)
        }
    }
}

/// One step of publishing, as `ReceiveDirectory`'s recorder is told it. Paths are relative to the receive directory
/// ("." for the directory itself).
enum PublishStep: Equatable, Sendable {
    /// The staged file's permissions and modification time were set (`fchmod`, `futimens`).
    case attributes(key: String)
    /// The staged file was synced alone (`fsync`).
    case syncFile(key: String)
    /// The file system of the staging folder was synced (`syncfs`): every staged file written so far.
    case syncFileSystem
    /// The staged file was renamed into place (`renameat2`) under this path.
    case rename(key: String, to: String)
    /// This directory was synced (`fsync`): the names in it survive a crash.
    case syncDirectory(String)
}
