/// Limits how often connection requests may reach a person: a token bucket for all requests together and one per
/// requester (by key, e.g. a device ID), in a table that never grows past `capacity`.
///
/// Why: with the accept policy `ask`, every request becomes a prompt. Without a limit, anyone on the network could
/// fill a terminal with prompts (and hide a real one among them); with one global bucket only, a single noisy peer
/// could use up the prompts of everyone else. A request passes when both its requester's bucket and the global
/// bucket have a token, and only then are tokens taken. Pure value with the clock injected.
///
/// The per-requester table is bounded: when it is full, entries whose bucket has refilled (they are as good as new)
/// are dropped first, then the least recently used one. Forgetting an entry only restores that requester's own
/// allowance; the global bucket stays the hard bound, whatever keys a stranger invents.
public struct RequestLimiter<Key: Hashable & Sendable>: Sendable {
    /// Why a request was not let through.
    public enum Refusal: Equatable, Sendable {
        /// The requester used up its own allowance.
        case requesterExhausted
        /// Everyone together used up the allowance.
        case globalExhausted
    }

    /// The allowance of everyone together.
    public let globalRate: RateLimit
    /// The allowance of each requester.
    public let perRequesterRate: RateLimit
    /// Most requesters tracked at once.
    public let capacity: Int
    private var global: TokenBucket
    private var requesters: [Key: Entry] = [:]
    private var useCounter: UInt64 = 0

    private struct Entry: Sendable {
        var bucket: TokenBucket
        var lastUse: UInt64
    }

    /// A limiter with full buckets at `now`, tracking at most `capacity` requesters.
    public init(global: RateLimit, perRequester: RateLimit, capacity: Int = 256, now: ContinuousClock.Instant) {
        precondition(capacity >= 1, "the limiter tracks at least one requester")
        self.globalRate = global
        self.perRequesterRate = perRequester
        self.capacity = capacity
        self.global = TokenBucket(rate: global, now: now)
    }

    /// Requesters currently tracked (at most `capacity`).
    public var trackedRequesters: Int { requesters.count }

    /// Lets one request of `key` through (taking a token from both buckets) or says why not (taking none).
    public mutating func admit(_ key: Key, now: ContinuousClock.Instant) -> Refusal? {
        let own = requesters[key]?.bucket ?? TokenBucket(rate: perRequesterRate, now: now)
        guard own.hasToken(now: now) else {
            touch(key, bucket: own)
            return .requesterExhausted
        }
        guard global.take(now: now) else { return .globalExhausted }
        var taken = own
        _ = taken.take(now: now)
        if requesters[key] == nil { makeRoom(now: now) }
        touch(key, bucket: taken)
        return nil
    }

    private mutating func touch(_ key: Key, bucket: TokenBucket) {
        useCounter &+= 1
        requesters[key] = Entry(bucket: bucket, lastUse: useCounter)
    }

    /// Frees one slot when the table is full: refilled entries first, else the least recently used.
    private mutating func makeRoom(now: ContinuousClock.Instant) {
        guard requesters.count >= capacity else { return }
        requesters = requesters.filter { !$0.value.bucket.isFull(now: now) }
        guard requesters.count >= capacity,
            let oldest = requesters.min(by: { $0.value.lastUse < $1.value.lastUse })?.key
        else { return }
        requesters.removeValue(forKey: oldest)
    }
}
