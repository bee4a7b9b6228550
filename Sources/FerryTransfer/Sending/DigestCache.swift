import FerrySystem
import FerryWire
import Foundation

/// The chunk digests of files this side sent before, kept on disk so that sending an unchanged file again costs no
/// hashing (issue 11: SHA-256 was 0.78 CPU-s per GiB of the sender's 2.1 on this machine).
///
/// An entry is keyed by what says a file is unchanged (`FileStatus.isUnchanged(since:)`: device, inode, size,
/// modification and change time) and the chunk size. The change time cannot be set back by any program, and every
/// write moves it; but the kernel stamps files with a coarse clock, so a write in the same tick as the change time
/// that was seen can keep it. An entry is therefore stored only for a file whose change and modification times were
/// at least `settledSeconds` (2) older than the moment its status was taken (`PreparedFile.statedAt`): any later write
/// then shows as a newer change time (git's index has the same "racily clean" rule).
///
/// Correctness does not rest on the cache: the receiver checks every chunk against its digest (PROTOCOL.md 11.10
/// rule 3) and the file against the file digest. A stale entry (a file rewritten without a new change time, through
/// a shared memory mapping) can only make a chunk arrive `corrupt`; the sender then forgets the entry and hashes
/// the file from the disk (`ChunkSource.forgetKeptDigests`), and the receiver publishes nothing that does not verify.
///
/// On disk: one file per entry under `directory` (mode 0700), named by the hex SHA-256 of its key, written to a
/// temporary name and renamed. Contents, little-endian: `ferrydc1`, the key (device, inode, size, modification and
/// change time as seconds and nanoseconds, chunk size), the chunk count, the chunk digests (32 bytes each), and a
/// SHA-256 of everything before it, so a torn or damaged entry is ignored. At most `maxEntries` are kept: storing
/// past that removes the least recently used quarter (a hit touches its entry). Files of fewer than `minimumChunks`
/// chunks are kept together in one bounded file instead (`SmallDigestTable`): an inode each would cost more than
/// their hashing, but without digests a re-sent folder of small files could not be found "already there".
public struct DigestCache: Sendable {
    /// Where the entries are kept.
    public let directory: String
    /// Entries kept at most.
    public let maxEntries: Int
    /// Seconds a file's change and modification times must lie before its status was taken for its digests to be kept
    /// (2; a test that keeps the digests of a file it just wrote gives a negative value).
    public let settledSeconds: Int64
    /// Whether entries are read: false (`ferry send --rehash`) hashes every file, and still keeps what it hashed,
    /// replacing what was kept.
    public let readsEntries: Bool
    /// The smallest file kept in an entry of its own, in chunks: a smaller file is hashed in milliseconds, and a
    /// folder of small files would cost an entry (an inode) each; those go to `small` instead.
    public static let minimumChunks = 4
    /// The largest file kept, in chunks (64 GiB at 1 MiB chunks; its entry is 2 MiB).
    public static let maximumChunks = 65_536

    static let magic = Array("ferrydc1".utf8)
    /// The digests of files of fewer than `minimumChunks` chunks, in one file (`small-digests`).
    let small: SmallDigestTable

    /// A cache in `directory`, created (mode 0700) when the first entry is stored.
    public init(directory: String, maxEntries: Int = 4096, settledSeconds: Int64 = 2, readsEntries: Bool = true) {
        self.directory = directory
        self.maxEntries = maxEntries
        self.settledSeconds = settledSeconds
        self.readsEntries = readsEntries
        small = SmallDigestTable(directory: directory)
    }

    static func chunkCount(_ size: UInt64, chunkSize: Int) -> Int {
        Int((size + UInt64(chunkSize) - 1) / UInt64(chunkSize))
    }

    /// Whether a file of `size` bytes is worth keeping: any file of 1 to `maximumChunks` chunks (those under
    /// `minimumChunks` in `small`).
    public static func isWorthKeeping(size: UInt64, chunkSize: Int) -> Bool {
        let chunks = (size + UInt64(chunkSize) - 1) / UInt64(chunkSize)
        return chunks >= 1 && chunks <= UInt64(maximumChunks)
    }

    /// Whether a file of `size` bytes is kept in `small`.
    static func isSmall(size: UInt64, chunkSize: Int) -> Bool {
        chunkCount(size, chunkSize: chunkSize) < minimumChunks
    }

    /// Whether a file with `status`, taken at `statedAt` (seconds since 1970), may be stored: both its times settled.
    public func isSettled(_ status: FerrySystem.FileStatus, statedAt: Double) -> Bool {
        let limit = Int64(statedAt.rounded(.down)) - settledSeconds
        return status.changeTime.seconds < limit && status.modificationTime.seconds < limit
    }

    /// The chunk digests (32 bytes each, in offset order) kept for the file with `status`, or nil (also when this
    /// cache does not read its entries).
    public func lookup(_ status: FerrySystem.FileStatus, chunkSize: Int) -> [UInt8]? {
        guard readsEntries, Self.isWorthKeeping(size: status.size, chunkSize: chunkSize) else { return nil }
        let key = Self.key(status, chunkSize: chunkSize)
        let count = Self.chunkCount(status.size, chunkSize: chunkSize)
        if Self.isSmall(size: status.size, chunkSize: chunkSize) {
            let kept = small.lookup(key)
            return kept?.count == count * FileDigest.length ? kept : nil
        }
        let path = self.path(for: key)
        let expected: Int = Self.magic.count + key.count + 4 + count * FileDigest.length + FileDigest.length
        // At most one byte more than an entry of this file has: whatever else lies at the path is not read whole.
        guard let bytes = PrivateFile.read(path, limit: expected), bytes.count == expected else { return nil }
        let digestsStart = Self.magic.count + key.count + 4
        let trailer = expected - FileDigest.length
        let header: [UInt8] = Self.magic + key + Self.littleEndian(UInt32(count))
        guard bytes[..<digestsStart].elementsEqual(header),
            SHA256Hasher.digest(bytes[..<trailer]).elementsEqual(bytes[trailer...])
        else { return nil }
        // Used: the least recently used entries go first.
        _ = utimensat(AT_FDCWD, path, nil, 0)
        return Array(bytes[digestsStart..<trailer])
    }

    /// Keeps `chunkDigests` (32 bytes each, in offset order) for the file with `status` taken at `statedAt`, if the
    /// file is worth it and settled; false when nothing was stored. Failing to write is not an error: the cache only
    /// saves work.
    @discardableResult
    public func store(
        _ chunkDigests: [UInt8], for status: FerrySystem.FileStatus, statedAt: Double, chunkSize: Int
    ) -> Bool {
        store([(chunkDigests, status, statedAt)], chunkSize: chunkSize) == 1
    }

    /// Keeps the digests of several files, each checked as `store` checks one, with the directory created and the
    /// cache trimmed once (a send of many large files lists the directory once, not once a file); how many were
    /// stored.
    @discardableResult
    public func store(
        _ entries: [(chunkDigests: [UInt8], status: FerrySystem.FileStatus, statedAt: Double)], chunkSize: Int
    ) -> Int {
        var kept = entries.filter { entry in
            Self.isWorthKeeping(size: entry.status.size, chunkSize: chunkSize)
                && isSettled(entry.status, statedAt: entry.statedAt)
                && entry.chunkDigests.count
                    == Self.chunkCount(entry.status.size, chunkSize: chunkSize) * FileDigest.length
        }
        let smallOnes = kept.filter { Self.isSmall(size: $0.status.size, chunkSize: chunkSize) }
        let storedSmall = small.store(smallOnes.map { (Self.key($0.status, chunkSize: chunkSize), $0.chunkDigests) })
        kept = kept.filter { !Self.isSmall(size: $0.status.size, chunkSize: chunkSize) }
        guard !kept.isEmpty,
            (try? FileManager.default.createDirectory(
                atPath: directory, withIntermediateDirectories: true, attributes: [.posixPermissions: 0o700])) != nil
        else { return storedSmall }
        let stored = kept.filter { write($0.chunkDigests, for: $0.status, chunkSize: chunkSize) }.count
        if stored > 0 { trim() }
        return storedSmall + stored
    }

    /// Writes one entry to a temporary name, then renames it into place; false when the write failed.
    private func write(_ chunkDigests: [UInt8], for status: FerrySystem.FileStatus, chunkSize: Int) -> Bool {
        let key = Self.key(status, chunkSize: chunkSize)
        var bytes: [UInt8] = Self.magic
        bytes += key
        bytes += Self.littleEndian(UInt32(Self.chunkCount(status.size, chunkSize: chunkSize)))
        bytes += chunkDigests
        bytes += SHA256Hasher.digest(bytes)
        return PrivateFile.replace(self.path(for: key), with: bytes)
    }

    /// Forgets the entry of the file with `status`, if there is one.
    public func remove(_ status: FerrySystem.FileStatus, chunkSize: Int) {
        if Self.isSmall(size: status.size, chunkSize: chunkSize) {
            small.remove(Self.key(status, chunkSize: chunkSize))
            return
        }
        unlink(entryPath(status, chunkSize: chunkSize))
    }

    /// Where the entry of the file with `status` is kept.
    func entryPath(_ status: FerrySystem.FileStatus, chunkSize: Int) -> String {
        path(for: Self.key(status, chunkSize: chunkSize))
    }

    /// Entries kept now.
    public func entryCount() -> Int {
        ((try? FileManager.default.contentsOfDirectory(atPath: directory)) ?? []).filter { $0.count == 64 }.count
    }

    /// Past `maxEntries`, removes the least recently used entries down to three quarters of it (and temporary files
    /// a process left behind more than a minute ago).
    private func trim() {
        let manager = FileManager.default
        guard let names = try? manager.contentsOfDirectory(atPath: directory), names.count > maxEntries else { return }
        var entries: [(name: String, used: Date)] = []
        let staleTemporary = Date(timeIntervalSinceNow: -60)
        for name in names {
            let path = directory + "/" + name
            guard let used = (try? manager.attributesOfItem(atPath: path))?[.modificationDate] as? Date else {
                continue
            }
            if name.hasSuffix(".tmp") {
                if used < staleTemporary { unlink(path) }
            } else if name.count == 64 {
                entries.append((name, used))
            }
        }
        guard entries.count > maxEntries else { return }
        entries.sort { $0.used < $1.used }
        for entry in entries.prefix(entries.count - maxEntries * 3 / 4) { unlink(directory + "/" + entry.name) }
    }

    private func path(for key: [UInt8]) -> String {
        directory + "/" + Hex.string(SHA256Hasher.digest(key))
    }

    /// Device, inode, size, modification and change time (seconds, nanoseconds), chunk size: 52 bytes.
    static func key(_ status: FerrySystem.FileStatus, chunkSize: Int) -> [UInt8] {
        var key: [UInt8] = []
        key.reserveCapacity(52)
        key += littleEndian(status.device)
        key += littleEndian(status.inode)
        key += littleEndian(status.size)
        key += littleEndian(UInt64(bitPattern: status.modificationTime.seconds))
        key += littleEndian(status.modificationTime.nanoseconds)
        key += littleEndian(UInt64(bitPattern: status.changeTime.seconds))
        key += littleEndian(status.changeTime.nanoseconds)
        key += littleEndian(UInt32(chunkSize))
        return key
    }

    static func littleEndian<T: FixedWidthInteger>(_ value: T) -> [UInt8] {
        withUnsafeBytes(of: value.littleEndian) { Array($0) }
    }
}

extension DigestCache {
    /// `$XDG_CACHE_HOME/ferry/digests` (an absolute XDG_CACHE_HOME), else `$HOME/.cache/ferry/digests`; nil when the
    /// environment has neither (a command run in a test's fixed environment keeps nothing).
    public static func standardDirectory(environment: [String: String]) -> String? {
        if let cache = environment["XDG_CACHE_HOME"], cache.hasPrefix("/") { return cache + "/ferry/digests" }
        guard let home = environment["HOME"], home.hasPrefix("/") else { return nil }
        return home + "/.cache/ferry/digests"
    }
}
