/// The receive path's I/O queue (`BlockingIO`), where the writes of frames that arrived together go to the queue as one
/// job instead of one job each.
///
/// Why: the sender hands the frames of up to 64 small files to its link at once (`SmallFileFrames`), so they reach
/// the engine together; each file's chunk write and the turn of its verification were two jobs on the queue, and the
/// queue's thread, having finished the one before while the engine hashed the next chunk, was woken for most of them
/// (a `futex` wake and a context switch on each side of it, per file). Work `gather`ed here waits in a list, on the
/// engine's actor, until `flush` hands the whole list to the queue as one job, which runs it in order: the engine's
/// frame loop flushes once it has no frame left in hand, and `gather` flushes by itself at `maximumItems` or
/// `maximumBytes`, so the writes of a long burst still run beside the hashing of the chunks after them.
///
/// Order: everything goes to one serial queue in the order it was given here. `submit` and `run` flush what was
/// gathered before queueing their own work, so no work overtakes work gathered before it (a verification never runs
/// before the write of its file's last chunk; an acknowledgement, carried out on completion, never before its write).
/// Touched only on the engine's actor (not `Sendable`): the list needs no lock.
final class GatheringIO {
    /// At most this many pieces of work wait in the list.
    static let maximumItems = 64
    /// At most this many bytes of writes wait in the list (a chunk of a large file, 1 MiB by default, goes at once).
    static let maximumBytes = 512 << 10

    private let queue: BlockingIO
    private var gathered: [@Sendable () -> Void] = []
    private var gatheredBytes = 0
    /// Jobs handed to the queue so far (tests count them; nothing decides by it).
    private(set) var jobs = 0

    init(label: String) {
        queue = BlockingIO(label: label)
    }

    /// Whether gathered work waits for `flush`.
    var isHolding: Bool { !gathered.isEmpty }

    /// Adds `body` (writing `bytes`) to the list: it runs after everything given here before it, in one job with the
    /// work gathered up to the next `flush`. Flushes at once past either bound.
    func gather(bytes: Int, _ body: @escaping @Sendable () -> Void) {
        gathered.append(body)
        gatheredBytes += bytes
        if gathered.count >= Self.maximumItems || gatheredBytes >= Self.maximumBytes { flush() }
    }

    /// Hands what was gathered to the queue, as one job.
    func flush() {
        guard !gathered.isEmpty else { return }
        let work = gathered
        gathered = []
        gatheredBytes = 0
        jobs += 1
        if work.count == 1 {
            queue.submit(work[0])
        } else {
            queue.submit { for body in work { body() } }
        }
    }

    /// Queues `body` without waiting for it, after what was gathered before.
    func submit(_ body: @escaping @Sendable () -> Void) {
        flush()
        jobs += 1
        queue.submit(body)
    }

    /// Runs `body` on the queue after everything given here before it (gathered work included), and returns its
    /// result. Queued before the caller's actor is left, as `BlockingIO.run`.
    func run<T: Sendable, Failure: Error>(
        isolation: isolated (any Actor)? = #isolation, _ body: @escaping @Sendable () throws(Failure) -> T
    ) async throws(Failure) -> T {
        flush()
        jobs += 1
        return try await queue.run(isolation: isolation, body)
    }
}
