import Dispatch

/// Runs blocking file-system work (reads, writes, syncs, compression of a chunk) on a dispatch queue instead of
/// Swift's cooperative thread pool.
///
/// Why: the pool has one thread per core, and the session's heartbeats, readers and writers run on it. An
/// `fsync` or `syncfs` behind a few hundred megabytes of dirty pages can block for seconds; on the pool that
/// starves the session until peers time out. A serial queue also keeps the order of the work given to it, which
/// the file digest (a SHA-256 over the chunks' digests, in order) needs.
struct BlockingIO: Sendable {
    private let queue: DispatchQueue

    init(label: String) {
        queue = DispatchQueue(label: label, qos: .userInitiated)
    }

    /// Queues `body` without waiting for it.
    func submit(_ body: @escaping @Sendable () -> Void) {
        queue.async(execute: body)
    }

    /// Runs `body` on the queue, after everything given to the queue before it. The work is queued before the
    /// caller's actor is left (`isolation`), so two calls from one actor reach the queue in the order made.
    func run<T: Sendable, Failure: Error>(
        isolation: isolated (any Actor)? = #isolation, _ body: @escaping @Sendable () throws(Failure) -> T
    ) async throws(Failure) -> T {
        let result: Result<T, Failure> = await withCheckedContinuation(isolation: isolation) { continuation in
            queue.async {
                continuation.resume(returning: Result { () throws(Failure) -> T in try body() })
            }
        }
        return try result.get()
    }
}
