import FerryWire
import Testing

@testable import FerryStateMachines

@Suite struct DiscoveryCacheTests {
    typealias Cache = DiscoveryCache<String>
    let t0 = ContinuousClock.now

    func beacon(
        _ peer: UInt64, session: String = "s", name: String = "alice", flags: BeaconFlags = [.available],
        mode: PeerMode = .peer
    ) -> Beacon {
        Beacon(
            flags: flags, mode: mode, peerID: PeerID(rawValue: peer),
            deviceID: DeviceID(bytes: Array(repeating: UInt8(truncatingIfNeeded: peer), count: 32))!, tcpPort: 41971,
            sessionID: session, displayName: name)
    }

    func cache(capacity: Int = 256) -> Cache {
        Cache(configuration: .init(localPeerID: PeerID(rawValue: 99), sessionID: "s", capacity: capacity))
    }

    @Test func startAnnouncesWithAQuery() {
        var cache = cache()
        #expect(cache.started(now: t0, jitter: 0.5) == [.announce(query: true)])
    }

    @Test func newPeerIsFoundThenUpdatedOnlyOnChange() throws {
        var cache = cache()
        let found = cache.beaconReceived(beacon(1), from: "10.0.0.1", now: t0)
        guard case .peerFound(let record) = try #require(found.first) else {
            Issue.record("expected peerFound, got \(found)")
            return
        }
        #expect(record.displayName == "alice" && record.address == "10.0.0.1")
        #expect(cache.beaconReceived(beacon(1), from: "10.0.0.1", now: t0 + .seconds(1)) == [])
        let renamed = cache.beaconReceived(beacon(1, name: "bob"), from: "10.0.0.1", now: t0 + .seconds(2))
        guard case .peerUpdated(let updated) = try #require(renamed.first) else {
            Issue.record("expected peerUpdated, got \(renamed)")
            return
        }
        #expect(updated.displayName == "bob")
    }

    @Test func ownAndOtherSessionBeaconsAreIgnored() {
        var cache = cache()
        #expect(cache.beaconReceived(beacon(99), from: "a", now: t0) == [])
        #expect(cache.beaconReceived(beacon(1, session: "other"), from: "a", now: t0) == [])
        #expect(cache.records.isEmpty)
        #expect(cache.otherSessionBeacons == 1)
    }

    @Test func peerExpiresAfterThreeMissedAnnouncements() {
        var cache = cache()
        _ = cache.beaconReceived(beacon(1), from: "a", now: t0)
        // Interval 2 s: still there after 6 s, gone after 7 s (three intervals and a half).
        #expect(!cache.tick(now: t0 + .seconds(6), jitter: 0).contains(.peerLost(PeerID(rawValue: 1))))
        #expect(cache.tick(now: t0 + .milliseconds(7100), jitter: 0).contains(.peerLost(PeerID(rawValue: 1))))
        #expect(cache.records.isEmpty)
    }

    @Test func leavingBeaconLosesThePeerAtOnce() {
        var cache = cache()
        _ = cache.beaconReceived(beacon(1), from: "a", now: t0)
        #expect(
            cache.beaconReceived(beacon(1, flags: [.leaving]), from: "a", now: t0) == [.peerLost(PeerID(rawValue: 1))])
    }

    @Test func floodOfRandomPeersStaysBounded() {
        var cache = cache(capacity: 16)
        var generator = SystemRandomNumberGenerator()
        for _ in 0..<10_000 {
            _ = cache.beaconReceived(beacon(UInt64.random(in: 100...UInt64.max, using: &generator)), from: "x", now: t0)
        }
        #expect(cache.records.count == 16)
        #expect(cache.droppedForCapacity == 10_000 - 16)
    }

    @Test func queriesAreAnsweredAtOnceUpToTheBurst() {
        var cache = cache()
        // Sixteen processes started one after another (a script's sends): each is answered at once.
        for index in 0..<16 {
            let actions = cache.beaconReceived(
                beacon(UInt64(index + 1), flags: [.query]), from: "a", now: t0 + .milliseconds(40 * index))
            #expect(actions.contains(.announce(query: false)), "query \(index)")
        }
        #expect(!cache.answerOwed)
    }

    @Test func aQueryBeyondTheRateIsAnsweredLaterNotDropped() {
        var cache = cache()
        _ = cache.started(now: t0, jitter: 0)  // the periodic announcement is due at 1.6 s
        for index in 0..<16 {
            _ = cache.beaconReceived(beacon(UInt64(index + 1), flags: [.query]), from: "a", now: t0)
        }
        // The 17th and 18th within the same instant: the rate is spent, so no answer now, but one is owed.
        let ninth = cache.beaconReceived(beacon(17, flags: [.query]), from: "b", now: t0 + .milliseconds(10))
        let tenth = cache.beaconReceived(beacon(18, flags: [.query]), from: "c", now: t0 + .milliseconds(20))
        #expect(!ninth.contains(.announce(query: false)) && !tenth.contains(.announce(query: false)))
        #expect(cache.answerOwed)
        // A token comes back every 62.5 ms (16 a second): one answer then serves both queries, long before 1.6 s.
        #expect(cache.tick(now: t0 + .milliseconds(50), jitter: 0) == [])
        #expect(cache.tick(now: t0 + .milliseconds(70), jitter: 0) == [.announce(query: false)])
        #expect(!cache.answerOwed)
        #expect(cache.tick(now: t0 + .milliseconds(200), jitter: 0) == [])
    }

    @Test func aQueryFloodGetsAtMostTheRate() {
        var cache = cache()
        var answers = 0
        // 10 000 queries over 10 s, with a tick every 100 ms (the cache is not started: no periodic announcements):
        // the burst plus 16 answers a second, no more.
        for step in 0..<10_000 {
            let now = t0 + .milliseconds(step)
            let actions = cache.beaconReceived(beacon(UInt64(step + 1), flags: [.query]), from: "x", now: now)
            answers += actions.filter { $0 == .announce(query: false) }.count
            if step % 100 == 99 {
                answers += cache.tick(now: now, jitter: 0).filter { $0 == .announce(query: false) }.count
            }
        }
        #expect(answers <= 16 + 160)
        #expect(answers >= 16 + 159)
    }

    @Test func clientBeaconsAreNotListed() {
        var cache = cache()
        let actions = cache.beaconReceived(beacon(1, flags: [.query], mode: .client), from: "a", now: t0)
        #expect(actions == [.announce(query: false)])
        #expect(cache.records.isEmpty)
    }

    @Test func announcesPeriodicallyWithJitter() {
        var cache = cache()
        _ = cache.started(now: t0, jitter: 0)  // next at 1.6 s
        #expect(cache.tick(now: t0 + .seconds(1), jitter: 0) == [])
        #expect(cache.tick(now: t0 + .seconds(2), jitter: 1) == [.announce(query: false)])  // next at 4.4 s
        #expect(cache.tick(now: t0 + .milliseconds(4300), jitter: 0) == [])
        #expect(cache.tick(now: t0 + .milliseconds(4500), jitter: 0) == [.announce(query: false)])
    }
}
