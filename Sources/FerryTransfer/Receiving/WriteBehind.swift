import FerrySystem

/// Write-behind for the staged file of a large incoming file: its writeback starts as its chunks are written, and
/// the pages written a little earlier are waited for and dropped from the page cache.
///
/// Why: a staged file is synced before it is published (PROTOCOL.md 11.10 rule 5). Left to the page cache, a large
/// file stays dirty until that sync, which then waits for all of it at the end, and its pages fill memory the
/// kernel must find (and this VM back, on first touch) again for every further chunk: the copy into the page cache
/// was 43 % of a receiver's CPU. With write-behind the disk works while the rest of the file arrives, the final sync
/// finds little left to do, and the same few megabytes of page cache are reused chunk after chunk. The wait is
/// bounded by `lag` and is flow control too: a receiver whose disk is slower than its link waits here, before it
/// acknowledges the chunk, instead of piling up dirty pages. Files under `minimumFileSize` are left to the sync
/// before publishing (small files are synced in batches; a hint per chunk would only add system calls). A published
/// large file is therefore mostly not in the page cache: the program that reads it next reads it from the disk.
struct WriteBehind: Sendable, Equatable {
    /// Files smaller than this get no write-behind.
    static let minimumFileSize: UInt64 = 16 << 20
    /// How far behind the newest write pages are waited for and dropped.
    static let lag: UInt64 = 8 << 20

    /// The range whose writeback starts now: the bytes just written.
    var start: Range<UInt64>?
    /// The range to wait for and drop: the same length, `lag` bytes earlier in the file.
    var evict: Range<UInt64>?

    /// What to do after writing `length` bytes at `offset` of a file of `fileSize` bytes.
    static func after(writing length: Int, at offset: UInt64, fileSize: UInt64) -> WriteBehind {
        guard fileSize >= minimumFileSize, length > 0 else { return WriteBehind() }
        let written = offset..<(offset + UInt64(length))
        guard offset >= lag else { return WriteBehind(start: written) }
        return WriteBehind(start: written, evict: (offset - lag)..<(offset - lag + UInt64(length)))
    }

    /// Carries the plan out on `file`. Errors are write errors: a failed wait has also consumed the error the
    /// file's `fdatasync` would have reported (`RegularFile.evictWritten`).
    func perform(on file: RegularFile) throws(SystemError) {
        if let start { try file.startWriteback(at: start.lowerBound, count: Int(start.count)) }
        if let evict { try file.evictWritten(at: evict.lowerBound, count: Int(evict.count)) }
    }
}
