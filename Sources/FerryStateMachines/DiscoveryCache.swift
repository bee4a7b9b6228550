import FerryWire

/// The discovery cache: what this process knows of other peers' presence, from their beacons.
///
/// Pure value: the driver feeds it beacons and clock ticks and carries out the actions it returns. It never
/// holds more than `capacity` peers, whatever arrives on the multicast group (a flood of beacons with random
/// peer IDs cannot grow it), ignores its own beacons and those of other sessions, and expires a peer after
/// `missedAnnouncementsBeforeExpiry` announcement intervals without a beacon.
public struct DiscoveryCache<Address: Hashable & Sendable>: Sendable {
    /// A peer as discovery knows it.
    public struct Record: Equatable, Sendable {
        /// The peer's ID for its current run.
        public var peerID: PeerID
        /// The device ID its beacon names (not authenticated).
        public var deviceID: DeviceID
        /// Its display name.
        public var displayName: String
        /// Its session mode (server or peer: clients are never listed).
        public var mode: PeerMode
        /// Where its beacon came from, with the TCP port it announced.
        public var address: Address
        /// The TCP port it accepts links on.
        public var tcpPort: UInt16
        /// Whether it announces that it accepts connections.
        public var isAvailable: Bool
        /// When its latest beacon arrived; it expires after `Configuration.missedAnnouncementsBeforeExpiry` intervals without one.
        public var lastSeen: ContinuousClock.Instant
        /// Whether its application reads messages: false when its beacon has the `filesOnly` flag.
        public var takesMessages = true
    }

    /// What the driver must do after an event.
    public enum Action: Equatable, Sendable {
        /// A peer not known before (or known again after it expired).
        case peerFound(Record)
        /// A known peer changed name, address, port or availability.
        case peerUpdated(Record)
        /// A peer left or missed too many announcements.
        case peerLost(PeerID)
        /// Multicast our own beacon now, with the query flag if `query`.
        case announce(query: Bool)
    }

    /// Tunables; the defaults are the documented protocol values.
    public struct Configuration: Sendable {
        /// Our own peer ID: our beacons come back through multicast loopback and are dropped.
        public var localPeerID: PeerID
        /// Our session: beacons of other sessions are dropped (and counted).
        public var sessionID: String
        /// How often we announce (with jitter), and the unit of expiry.
        public var announceInterval: Duration
        /// A peer unheard for this many intervals (and a half) is lost.
        public var missedAnnouncementsBeforeExpiry: Int
        /// Most peers listed at once; beacons of new peers beyond it are dropped until some expire.
        public var capacity: Int
        /// How many answers to queries may go out: a burst at once (every process that starts sends a query, and
        /// a script may start several in a row), then evenly spaced, so a query flood cannot make us flood the
        /// group. A query beyond it is not dropped: it is answered once the rate allows (`tick`).
        public var answerRate: RateLimit

        /// A configuration with the protocol's defaults (10.5) for what is not given.
        public init(
            localPeerID: PeerID, sessionID: String, announceInterval: Duration = .seconds(2),
            missedAnnouncementsBeforeExpiry: Int = 3, capacity: Int = 256,
            answerRate: RateLimit = RateLimit(burst: 16, per: .seconds(1))
        ) {
            self.localPeerID = localPeerID
            self.sessionID = sessionID
            self.announceInterval = announceInterval
            self.missedAnnouncementsBeforeExpiry = missedAnnouncementsBeforeExpiry
            self.capacity = capacity
            self.answerRate = answerRate
        }
    }

    /// The tunables the cache was made with.
    public let configuration: Configuration
    /// The peers listed now, by peer ID.
    public private(set) var records: [PeerID: Record] = [:]
    /// Beacons dropped because the cache was full.
    public private(set) var droppedForCapacity = 0
    /// Beacons of other sessions (ignored, counted for diagnostics).
    public private(set) var otherSessionBeacons = 0
    private var nextAnnouncement: ContinuousClock.Instant?
    /// The answers the rate allows; made on the first query.
    private var answers: TokenBucket?
    /// A query arrived that no answer has served yet (the rate was spent): `tick` answers it.
    public private(set) var answerOwed = false

    /// An empty cache.
    public init(configuration: Configuration) {
        self.configuration = configuration
    }

    /// The expiry horizon: a peer unheard for this long is lost.
    public var expiry: Duration {
        configuration.announceInterval * configuration.missedAnnouncementsBeforeExpiry
            + configuration.announceInterval / 2
    }

    /// Call once when discovery starts: announce with a query so that every peer answers at once.
    public mutating func started(now: ContinuousClock.Instant, jitter: Double) -> [Action] {
        nextAnnouncement = now + jittered(jitter)
        return [.announce(query: true)]
    }

    /// A beacon arrived from `address`.
    public mutating func beaconReceived(
        _ beacon: Beacon, from address: Address, now: ContinuousClock.Instant
    ) -> [Action] {
        guard beacon.peerID != configuration.localPeerID else { return [] }
        guard beacon.sessionID == configuration.sessionID else {
            otherSessionBeacons += 1
            return []
        }
        var actions: [Action] = []
        if beacon.mode == .client {
            // Clients browse and never take connections: they are not listed, but their queries are answered.
            answerQuery(beacon, now: now, into: &actions)
            return actions
        }
        if beacon.flags.contains(.leaving) {
            if records.removeValue(forKey: beacon.peerID) != nil {
                actions.append(.peerLost(beacon.peerID))
            }
            return actions
        }
        let record = Record(
            peerID: beacon.peerID, deviceID: beacon.deviceID, displayName: beacon.displayName, mode: beacon.mode,
            address: address, tcpPort: beacon.tcpPort, isAvailable: beacon.flags.contains(.available),
            lastSeen: now, takesMessages: !beacon.flags.contains(.filesOnly))
        if let old = records[beacon.peerID] {
            records[beacon.peerID] = record
            var comparable = old
            comparable.lastSeen = now
            if comparable != record { actions.append(.peerUpdated(record)) }
        } else if records.count < configuration.capacity {
            records[beacon.peerID] = record
            actions.append(.peerFound(record))
        } else {
            droppedForCapacity += 1
        }
        answerQuery(beacon, now: now, into: &actions)
        return actions
    }

    private mutating func answerQuery(_ beacon: Beacon, now: ContinuousClock.Instant, into actions: inout [Action]) {
        guard beacon.flags.contains(.query) else { return }
        var bucket = answers ?? TokenBucket(rate: configuration.answerRate, now: now)
        defer { answers = bucket }
        guard bucket.take(now: now) else {
            answerOwed = true  // the next answer the rate allows serves this query (and every other one waiting)
            return
        }
        answerOwed = false
        actions.append(.announce(query: false))
    }

    /// The clock moved: expire silent peers and announce when due. `jitter` in [0, 1) spreads announcements.
    public mutating func tick(now: ContinuousClock.Instant, jitter: Double) -> [Action] {
        var actions: [Action] = []
        let horizon = expiry
        let expired = records.values.filter { now - $0.lastSeen > horizon }.map(\.peerID).sorted()
        for peerID in expired {
            records.removeValue(forKey: peerID)
            actions.append(.peerLost(peerID))
        }
        if let next = nextAnnouncement, now >= next {
            nextAnnouncement = now + jittered(jitter)
            answerOwed = false  // this announcement answers every query waiting
            actions.append(.announce(query: false))
        } else if answerOwed, answers?.take(now: now) == true {
            answerOwed = false
            actions.append(.announce(query: false))
        }
        return actions
    }

    /// Forget a peer (for instance when it said goodbye on a link).
    public mutating func remove(_ peerID: PeerID) {
        records.removeValue(forKey: peerID)
    }

    /// The interval with ±20% jitter, so that peers started together do not announce in lockstep.
    private func jittered(_ jitter: Double) -> Duration {
        let clamped = min(max(jitter, 0), 1)
        return configuration.announceInterval * (0.8 + 0.4 * clamped)
    }
}
