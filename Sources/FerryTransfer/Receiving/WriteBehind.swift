import Dispatch
import FerrySystem
import Synchronization

/// Write-behind for the staged file of a large incoming file: its writeback starts as its chunks are written, and
/// the pages written a little earlier are waited for and dropped from the page cache.
///
/// Why: a staged file is synced before it is published (PROTOCOL.md 11.10 rule 5). Left to the page cache, a large
/// file stays dirty until that sync, which then waits for all of it at the end, and its pages fill memory the
/// kernel must find (and this VM back, on first touch) again for every further chunk: the copy into the page cache
/// was 43 % of a receiver's CPU. With write-behind the disk works while the rest of the file arrives, the final sync
/// finds little left to do, and the same few megabytes of page cache are reused chunk after chunk. The wait for
/// the disk runs on a queue of its own (`Writeback`), not on the I/O queue, so the next chunk's `pwrite` and this chunk's
/// acknowledgement do not wait for the disk (they did, and the disk's latency paced the sender: ARCHITECTURE.md
/// "Where the CPU goes per GiB"). It is still flow control: at most `Writeback.maximumPending` waits are queued, and
/// a receiver whose disk is slower than its link blocks the I/O queue there, before it acknowledges the chunk,
/// instead of piling up dirty pages. Files under `minimumFileSize` are left to the sync
/// before publishing (small files are synced in batches; a hint per chunk would only add system calls). A published
/// large file is therefore mostly not in the page cache: the program that reads it next reads it from the disk.
/// Where the file system takes direct writes (`RegularFile.enableDirectWrites`), a large file needs none of this:
/// its whole blocks go past the page cache, and only its partial last block is left to the sync before publishing.
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

    /// Carries the plan out on `file`: starts the writeback here and queues the wait-and-drop on `writeback`, whose
    /// failure lands in `failure`. Errors are write errors: a failed wait has also consumed the error the file's
    /// `fdatasync` would have reported (`RegularFile.evictWritten`), so the file is not published unless
    /// `Writeback.drained(_:)` found no failure.
    func perform(on file: RegularFile, _ writeback: Writeback, failure: WritebackFailure) throws(SystemError) {
        if let start { try file.startWriteback(at: start.lowerBound, count: Int(start.count)) }
        if let evict { writeback.evict(evict, of: file, failure: failure) }
    }
}

/// The first failed eviction of one staged file (`IncomingFile.writebackFailure`), written on the writeback queue and
/// read by the engine before the file is verified.
final class WritebackFailure: Sendable {
    private let error = Mutex<SystemError?>(nil)

    func record(_ failure: SystemError) { error.withLock { $0 = $0 ?? failure } }
    var recorded: SystemError? { error.withLock { $0 } }
}

/// The queue on which the evictions of write-behind wait for the disk, apart from the I/O queue that writes.
///
/// Why a queue of its own: an eviction waits for the writeback of a range written `WriteBehind.lag` bytes earlier.
/// On the I/O queue that wait held up every later `pwrite` and, through them, every acknowledgement, so the disk's
/// latency (not its throughput) paced the sender. Here the waits run in order beside the writes. The I/O queue blocks
/// only when `maximumPending` evictions are still queued (a disk slower than the link), which keeps the page cache a
/// file occupies bounded and is the flow control the wait used to give.
final class Writeback: Sendable {
    /// Evictions queued and not yet done, at most: with 1 MiB chunks, writeback may fall this many megabytes
    /// further behind than `WriteBehind.lag` before a write waits.
    static let maximumPending = 16

    private let queue = DispatchQueue(label: "ferry.writeback", qos: .userInitiated)
    private let room: DispatchSemaphore
    /// How a range is waited for and dropped (tests replace it to fail or hold an eviction).
    private let evictRange: @Sendable (RegularFile, Range<UInt64>) throws(SystemError) -> Void

    init(
        maximumPending: Int = Writeback.maximumPending,
        evict: @escaping @Sendable (RegularFile, Range<UInt64>) throws(SystemError) -> Void = {
            file, range throws(SystemError) in
            try file.evictWritten(at: range.lowerBound, count: Int(range.count))
        }
    ) {
        room = DispatchSemaphore(value: maximumPending)
        evictRange = evict
    }

    /// Queues the wait for and the dropping of `range` of `file`; blocks the caller (the I/O queue) while
    /// `maximumPending` evictions are queued. A failure is recorded in `failure`, never thrown here.
    func evict(_ range: Range<UInt64>, of file: RegularFile, failure: WritebackFailure) {
        room.wait()
        queue.async { [room, evictRange] in
            defer { room.signal() }
            do throws(SystemError) {
                try evictRange(file, range)
            } catch {
                failure.record(error)
            }
        }
    }

    /// Waits until every eviction queued so far is done, and returns the first failure recorded in `failure`.
    func drained(_ failure: WritebackFailure) async -> SystemError? {
        await withCheckedContinuation { continuation in
            queue.async { continuation.resume(returning: failure.recorded) }
        }
    }
}
