/// A rate limit: at most `burst` events at once, and `burst` more per `interval` after that, refilled evenly.
///
/// Why a value of its own: the session's knobs (`SessionConfiguration.connectionRequestRate`) name a rate, and tests
/// choose one slow enough (a few per hour) that no refill can happen while they run.
public struct RateLimit: Equatable, Sendable, CustomStringConvertible {
    /// Events allowed at once; also how many are refilled per `interval`. At least 1.
    public let burst: Int
    /// The time in which `burst` tokens are refilled. Positive.
    public let interval: Duration

    /// `burst` events at once, and `burst` more per `interval`. Preconditions: `burst` >= 1, `interval` > 0.
    public init(burst: Int, per interval: Duration) {
        precondition(burst >= 1, "a rate allows at least one event")
        precondition(interval > .zero, "a rate's interval is positive")
        self.burst = burst
        self.interval = interval
    }

    /// `burst` events per minute.
    public static func perMinute(_ burst: Int) -> RateLimit {
        RateLimit(burst: burst, per: .seconds(60))
    }

    /// `N per DURATION`, for logs.
    public var description: String { "\(burst) per \(interval)" }
}

/// A token bucket on the monotonic clock: `take(now:)` succeeds while tokens are left; tokens come back one every
/// `rate.interval / rate.burst`, up to `rate.burst`.
///
/// Pure value: the caller passes the instant, so tests drive it with instants of their own and never sleep. Time
/// that runs backwards (an instant older than the last one seen) refills nothing. Refill is counted in whole
/// tokens from the last refill instant, so fractions are not lost between calls.
public struct TokenBucket: Equatable, Sendable {
    /// The rate the bucket enforces.
    public let rate: RateLimit
    /// Tokens left at `refilledAt`.
    public private(set) var tokens: Int
    private var refilledAt: ContinuousClock.Instant

    /// A full bucket.
    public init(rate: RateLimit, now: ContinuousClock.Instant) {
        self.rate = rate
        self.tokens = rate.burst
        self.refilledAt = now
    }

    /// The time one token takes to come back.
    public var tokenInterval: Duration { rate.interval / rate.burst }

    /// Whether the bucket would be full at `now` (nothing taken that has not come back).
    public func isFull(now: ContinuousClock.Instant) -> Bool {
        var copy = self
        copy.refill(now: now)
        return copy.tokens >= rate.burst
    }

    /// Whether a token is left at `now`, without taking it.
    public func hasToken(now: ContinuousClock.Instant) -> Bool {
        var copy = self
        copy.refill(now: now)
        return copy.tokens > 0
    }

    /// Takes one token if one is left at `now`; false when the rate is exhausted.
    public mutating func take(now: ContinuousClock.Instant) -> Bool {
        refill(now: now)
        guard tokens > 0 else { return false }
        tokens -= 1
        return true
    }

    private mutating func refill(now: ContinuousClock.Instant) {
        guard now > refilledAt else { return }
        if tokens >= rate.burst {
            refilledAt = now
            return
        }
        let step = tokenInterval
        guard step > .zero else {
            tokens = rate.burst
            refilledAt = now
            return
        }
        let elapsed = now - refilledAt
        // Whole tokens only; Duration division gives a Double, bounded here before converting.
        let earned = min(elapsed / step, Double(rate.burst))
        let whole = Int(earned.rounded(.down))
        guard whole > 0 else { return }
        tokens = min(rate.burst, tokens + whole)
        refilledAt = tokens >= rate.burst ? now : refilledAt + step * whole
    }
}
