import FerrySystem
import FerryWire
import Synchronization

/// The one writer of a link: sends queued frames in order, then half-closes the stream when finished.
///
/// The session actor enqueues synchronously (so the order of frames is the order of its decisions) and a
/// task of the writer drains the queue through `ByteStream.write`, taking at most `batchLimit` bytes of frames at
/// a time, so that the rest stays in the queue where `discard(transfer:)` can still take a cancelled transfer's
/// frames out. `queuedBytes` lets senders wait for room, so a fast sender cannot queue without bound in front of a
/// slow link. When finished and drained the writer shuts down the stream's write side (`ByteStream.finishWriting`)
/// instead of closing it: the session's reader keeps reading until the peer closes, so that no unread byte makes
/// the kernel reset the connection and destroy our last frames (ARCHITECTURE "How a link closes").
final class LinkWriter: Sendable {
    /// One frame as queued: its blocks (header and payload may be separate arrays), and the transfer whose data it
    /// carries when it may be dropped unsent once that transfer is cancelled.
    private struct Entry {
        var blocks: [[UInt8]]
        var byteCount: Int
        var transfer: TransferID?
        /// Queued by a swarm member for another member (`Session.sendMemberFrame`): counted in `memberBytes`.
        var member = false
    }

    private struct State {
        var queue: [Entry] = []
        var queuedBytes = 0
        /// The part of `queuedBytes` in entries marked `member`, still queued or being written.
        var memberBytes = 0
        /// Tests only: the writer takes nothing from the queue while held (`hold()`).
        var held = false
        /// Tests only: `finish()` leaves the writer held (`hold(throughFinish: true)`).
        var heldThroughFinish = false
        /// A batch was taken and is being written; and who waits for it to be written (`hold()`).
        var writing = false
        var writtenWaiters: [CheckedContinuation<Void, Never>] = []
        var finished = false
        var failed = false
        var wakeWriter: CheckedContinuation<Void, Never>?
        var roomWaiters: [UInt64: CheckedContinuation<Void, Never>] = [:]
        var nextWaiter: UInt64 = 0
        /// When the writer last handed bytes to the stream, or when the queue last went from empty to not.
        var lastProgress = ContinuousClock.now
    }

    /// Senders wait while more than this many bytes are queued.
    let highWater: Int
    /// `highWater` unless a link is given another.
    static let defaultHighWater = 4 << 20
    private let state = Mutex(State())
    private let stream: any ByteStream

    init(stream: any ByteStream, highWater: Int = defaultHighWater) {
        self.stream = stream
        self.highWater = highWater
    }

    var queuedBytes: Int { state.withLock { $0.queuedBytes } }

    /// The bytes of frames queued with `member: true` not yet written: what a swarm member queued for the member at
    /// the other end, apart from the link's other traffic (PROTOCOL.md 11.11 rule 4).
    var memberBytes: Int { state.withLock { $0.memberBytes } }

    /// Finished or failed: nothing queued from now on goes out.
    var hasEnded: Bool { state.withLock { $0.finished || $0.failed } }

    /// Bytes the stream handed to the kernel that the peer has not acknowledged (nil when the stream cannot tell); not
    /// those queued here, which wait for this process (the writer encrypting), not for the link.
    var unacknowledgedBytes: Int? { stream.unacknowledgedBytes }

    /// The stream's seconds limited by the peer's receive window (nil when it cannot tell).
    var receiveWindowLimitedSeconds: Double? { stream.receiveWindowLimitedSeconds }

    /// Queues one frame; false when the writer is finished or failed (the bytes are dropped).
    @discardableResult
    func enqueue(_ bytes: [UInt8]) -> Bool {
        enqueue(frame: [bytes], transfer: nil)
    }

    /// Queues one frame given as `blocks`; `transfer` marks a frame of that transfer's data (a chunk, a fileEnd),
    /// which `discard(transfer:)` may drop while it is unsent. False when the writer is finished or failed.
    /// `member` marks a frame a swarm member queued for another member (counted in `memberBytes`).
    @discardableResult
    func enqueue(frame blocks: [[UInt8]], transfer: TransferID?, member: Bool = false) -> Bool {
        let count = blocks.reduce(0) { $0 + $1.count }
        let (accepted, wake): (Bool, CheckedContinuation<Void, Never>?) = state.withLock { state in
            guard !state.finished, !state.failed else { return (false, nil) }
            if state.queuedBytes == 0 { state.lastProgress = .now }
            state.queue.append(Entry(blocks: blocks, byteCount: count, transfer: transfer, member: member))
            state.queuedBytes += count
            if member { state.memberBytes += count }
            defer { state.wakeWriter = nil }
            return (true, state.wakeWriter)
        }
        wake?.resume()
        return accepted
    }

    /// Drops the frames of `transfer` that are queued and not yet taken by the writer (a frame already begun goes
    /// out whole, so the peer sees a prefix of the transfer's frames); returns how many bytes were dropped. The
    /// transfer was cancelled: its cancel and a goodbye need not wait behind megabytes of its chunks.
    @discardableResult
    func discard(transfer: TransferID) -> Int {
        let (dropped, waiters): (Int, [CheckedContinuation<Void, Never>]) = state.withLock { state in
            var dropped = 0
            state.queue.removeAll { entry in
                guard entry.transfer == transfer else { return false }
                dropped += entry.byteCount
                if entry.member { state.memberBytes -= entry.byteCount }
                return true
            }
            state.queuedBytes -= dropped
            guard dropped > 0, state.queuedBytes < highWater else { return (dropped, []) }
            defer { state.roomWaiters.removeAll() }
            return (dropped, Array(state.roomWaiters.values))
        }
        waiters.forEach { $0.resume() }
        return dropped
    }

    /// No more bytes will come: the writer drains what is queued, then closes the stream.
    func finish() {
        let (wake, waiters) = state.withLock { state in
            state.finished = true
            if !state.heldThroughFinish { state.held = false }
            defer {
                state.wakeWriter = nil
                state.roomWaiters.removeAll()
            }
            return (state.wakeWriter, Array(state.roomWaiters.values))
        }
        wake?.resume()
        waiters.forEach { $0.resume() }
    }

    /// Bytes are queued but none were written for this long: the peer stopped reading.
    func stalledDuration(now: ContinuousClock.Instant) -> Duration? {
        state.withLock { state in
            state.queuedBytes > 0 && !state.failed ? now - state.lastProgress : nil
        }
    }

    /// Tests only: the writer takes no more frames from the queue until `resume()` (or `finish()`, unless
    /// `throughFinish`: then a closed link's last frames wait too, as behind a writer that lags); the batch it is
    /// writing, if any, still goes out (`idle()` waits for it).
    func hold(throughFinish: Bool = false) {
        state.withLock { state in
            state.held = true
            state.heldThroughFinish = throughFinish
        }
    }

    /// Tests only: returns once no batch is being written, so that `queuedBytes` of a held writer then counts exactly
    /// the frames queued.
    func idle() async {
        await withCheckedContinuation { (continuation: CheckedContinuation<Void, Never>) in
            let wait = state.withLock { state -> Bool in
                guard state.writing else { return false }
                state.writtenWaiters.append(continuation)
                return true
            }
            if !wait { continuation.resume() }
        }
    }

    /// Tests only: the writer goes on after `hold()`.
    func resume() {
        let wake = state.withLock { state in
            state.held = false
            state.heldThroughFinish = false
            defer { state.wakeWriter = nil }
            return state.wakeWriter
        }
        wake?.resume()
    }

    /// Suspends until fewer than `highWater` bytes are queued, the writer ended, or the task is cancelled.
    func waitForRoom() async throws {
        let id = state.withLock { state in
            state.nextWaiter += 1
            return state.nextWaiter
        }
        await withTaskCancellationHandler {
            await withCheckedContinuation { (continuation: CheckedContinuation<Void, Never>) in
                let ready = state.withLock { state -> Bool in
                    if state.queuedBytes < highWater || state.finished || state.failed || Task.isCancelled {
                        return true
                    }
                    state.roomWaiters[id] = continuation
                    return false
                }
                if ready { continuation.resume() }
            }
        } onCancel: {
            let waiter = state.withLock { $0.roomWaiters.removeValue(forKey: id) }
            waiter?.resume()
        }
        try Task.checkCancellation()
    }

    /// The drain loop; returns when finished and drained (write side shut down) or when a write failed.
    func run() async {
        while true {
            await withCheckedContinuation { (wake: CheckedContinuation<Void, Never>) in
                let ready = state.withLock { state -> Bool in
                    // Held (tests): nothing is taken, and a finished writer does not end either.
                    if state.failed || (!state.held && (!state.queue.isEmpty || state.finished)) { return true }
                    state.wakeWriter = wake
                    return false
                }
                if ready { wake.resume() }
            }
            // A bounded batch: what stays queued can still be discarded.
            let taken: (blocks: [[UInt8]], member: Int)? = state.withLock { state in
                if state.queue.isEmpty || state.held {
                    return (state.finished && !state.held) || state.failed ? nil : ([], 0)
                }
                var taken = 0
                var size = 0
                while taken < state.queue.count, taken == 0 || size + state.queue[taken].byteCount <= Self.batchLimit {
                    size += state.queue[taken].byteCount
                    taken += 1
                }
                defer {
                    state.queue.removeFirst(taken)
                    state.writing = true
                }
                let member = state.queue[..<taken].reduce(0) { $0 + ($1.member ? $1.byteCount : 0) }
                return (state.queue[..<taken].flatMap(\.blocks), member)
            }
            guard let (batch, memberWritten) = taken else { break }
            guard !batch.isEmpty else {
                state.withLock { $0.writing = false }
                continue
            }
            // One write for the batch: the stream sends a chunk's header in the same slice as its data.
            do {
                try await stream.write(blocks: Self.coalesce(batch))
            } catch is SystemError {
                // The socket says the peer is gone (a reset, a broken pipe). Its last frames (a goodbye, a
                // transfer cancel saying why) may still wait unread in our receive buffer: closing here would
                // throw them away, so the reader drains them, meets the same error, and ends the link.
                markFailed()
                return
            } catch {
                markFailed()
                stream.close()
                return
            }
            let written = batch.reduce(0) { $0 + $1.count }
            let waiters: [CheckedContinuation<Void, Never>] = state.withLock { state in
                state.queuedBytes -= written
                state.memberBytes -= memberWritten
                state.lastProgress = .now
                state.writing = false
                var waiters = state.writtenWaiters
                state.writtenWaiters = []
                guard state.queuedBytes < highWater else { return waiters }
                defer { state.roomWaiters.removeAll() }
                waiters += state.roomWaiters.values
                return waiters
            }
            waiters.forEach { $0.resume() }
        }
        // Everything is sent: half-close (a TLS close_notify, then the socket's write side). The session closes the
        // stream once its reader has seen the peer close too, or after a grace time.
        await stream.finishWriting()
        markFailed()
    }

    /// Frames taken from the queue at a time (at least one, whatever its size).
    static let batchLimit = 256 << 10

    /// Joins runs of small blocks so that many small frames cost one write, not one each.
    static func coalesce(_ blocks: [[UInt8]], limit: Int = 256 << 10) -> [[UInt8]] {
        guard blocks.count > 1 else { return blocks }
        var result: [[UInt8]] = []
        var current: [UInt8] = []
        // Each joined block is allocated once, at the size of what is left to join (at most `limit`), instead of
        // growing by doubling, which copied a run of small files' chunk frames about twice more (4% of a sender's user
        // time with 1000 files of 4-64 KiB).
        var left = blocks.reduce(0) { $0 + ($1.count < limit ? $1.count : 0) }
        for block in blocks {
            if block.count >= limit {
                if !current.isEmpty { result.append(current); current = [] }
                result.append(block)
            } else {
                if current.count + block.count > limit { result.append(current); current = [] }
                if current.isEmpty { current.reserveCapacity(min(limit, left)) }
                current.append(contentsOf: block)
                left -= block.count
            }
        }
        if !current.isEmpty { result.append(current) }
        return result
    }

    private func markFailed() {
        let waiters: [CheckedContinuation<Void, Never>] = state.withLock { state in
            state.failed = true
            state.queue.removeAll()
            state.queuedBytes = 0
            state.memberBytes = 0
            state.writing = false
            defer {
                state.roomWaiters.removeAll()
                state.writtenWaiters.removeAll()
            }
            return Array(state.roomWaiters.values) + state.writtenWaiters
        }
        waiters.forEach { $0.resume() }
    }
}
