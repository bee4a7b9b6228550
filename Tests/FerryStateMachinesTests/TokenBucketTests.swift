import FerryStateMachines
import Testing

@Suite("Token bucket and request limiter")
struct TokenBucketTests {
    /// A fixed origin: every instant of these tests is this plus a duration, so nothing depends on real time.
    static let origin = ContinuousClock.now

    static func at(_ seconds: Double) -> ContinuousClock.Instant {
        origin + .milliseconds(Int64(seconds * 1000))
    }

    @Test func aFullBucketGivesItsBurstThenRefusesUntilATokenComesBack() {
        var bucket = TokenBucket(rate: .perMinute(10), now: Self.at(0))
        func take(_ seconds: Double) -> Bool { bucket.take(now: Self.at(seconds)) }
        for index in 0..<10 {
            #expect(take(Double(index) / 10), "token \(index)")
        }
        #expect(!take(1))
        #expect(!take(5.9))  // one token every 6 s, counted from the start
        #expect(take(6))
        #expect(!take(6))
        #expect(!take(11.9))
        #expect(take(12))
    }

    @Test func refillIsCappedAtTheBurstAndFractionsAreKept() {
        var bucket = TokenBucket(rate: .perMinute(3), now: Self.at(0))
        func take(_ seconds: Double) -> Bool { bucket.take(now: Self.at(seconds)) }
        for _ in 0..<3 { #expect(take(0)) }
        // An hour later: full again, but no more than the burst.
        for _ in 0..<3 { #expect(take(3600)) }
        #expect(!take(3600))
        // 20 s per token: 15 s + 5 s make one token although neither call alone did.
        #expect(!take(3615))
        #expect(take(3620))
    }

    @Test func timeRunningBackwardsRefillsNothing() {
        var bucket = TokenBucket(rate: RateLimit(burst: 1, per: .seconds(10)), now: Self.at(100))
        func take(_ seconds: Double) -> Bool { bucket.take(now: Self.at(seconds)) }
        #expect(take(100))
        #expect(!take(0))
        #expect(!take(109))
        #expect(take(110))
    }

    @Test func hasTokenAndIsFullDoNotTake() {
        var bucket = TokenBucket(rate: RateLimit(burst: 2, per: .seconds(10)), now: Self.at(0))
        func take(_ seconds: Double) -> Bool { bucket.take(now: Self.at(seconds)) }
        #expect(bucket.isFull(now: Self.at(0)))
        #expect(bucket.hasToken(now: Self.at(0)) && bucket.hasToken(now: Self.at(0)))
        #expect(take(0))
        #expect(!bucket.isFull(now: Self.at(0)))
        #expect(bucket.isFull(now: Self.at(5)))
        #expect(bucket.tokens == 1)
    }

    @Test func theLimiterStopsOneNoisyRequesterBeforeTheOthers() {
        var limiter = RequestLimiter<String>(
            global: .perMinute(10), perRequester: .perMinute(3), now: Self.at(0))
        func admit(_ key: String, _ seconds: Double) -> RequestLimiter<String>.Refusal? {
            limiter.admit(key, now: Self.at(seconds))
        }
        for _ in 0..<3 { #expect(admit("noisy", 1) == nil) }
        for _ in 0..<5 { #expect(admit("noisy", 1) == .requesterExhausted) }
        // The refused attempts took nothing from the others' allowance: 7 left for everyone else.
        for index in 0..<7 { #expect(admit("peer\(index)", 2) == nil) }
        #expect(admit("late", 2) == .globalExhausted)
        // A refusal by the global bucket does not use up the requester's own allowance.
        #expect(admit("late", 8) == nil)
    }

    @Test func aFloodOfNewRequestersIsBoundedByTheGlobalBucketAndTheTable() {
        var limiter = RequestLimiter<String>(
            global: .perMinute(10), perRequester: .perMinute(1), capacity: 16, now: Self.at(0))
        func admit(_ key: String, _ seconds: Double) -> RequestLimiter<String>.Refusal? {
            limiter.admit(key, now: Self.at(seconds))
        }
        var admitted = 0
        for key in 0..<10_000 where admit("stranger\(key)", Double(key) / 1000) == nil {
            admitted += 1
        }
        // 10 s: the burst of 10 and one token for each 6 s.
        #expect(admitted == 11)
        #expect(limiter.trackedRequesters <= 16)
    }

    @Test func aFullTableForgetsRefilledRequestersFirst() {
        var limiter = RequestLimiter<String>(
            global: .perMinute(100), perRequester: RateLimit(burst: 1, per: .seconds(60)), capacity: 2,
            now: Self.at(0))
        func admit(_ key: String, _ seconds: Double) -> RequestLimiter<String>.Refusal? {
            limiter.admit(key, now: Self.at(seconds))
        }
        #expect(admit("a", 0) == nil)
        #expect(admit("b", 30) == nil)
        // At 60 s, a's bucket is full again (forgettable) and b's is not: c takes a's place, b stays limited.
        #expect(admit("c", 60) == nil)
        #expect(limiter.trackedRequesters == 2)
        #expect(admit("b", 61) == .requesterExhausted)
        #expect(admit("c", 61) == .requesterExhausted)
    }
}
