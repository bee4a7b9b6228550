import FerryWire

/// The LocalSend devices this process knows of, from their multicast announcements and their `register` requests:
/// the LocalSend counterpart of `DiscoveryCache` (docs/LOCALSEND.md, "Discovery").
///
/// Pure value: the driver (`LocalSendDiscovery`) feeds it decoded messages and clock ticks and carries out the
/// actions it returns. Devices are keyed by their certificate fingerprint (the SHA-256 of their certificate, as
/// ferry's device ID is), written as 64 upper-case hex digits. What it promises:
/// - Bounded: never more than `capacity` devices. A device not listed yet is dropped (and counted) while the table
///   is full, rather than evicting a listed one, so a flood of forged announcements with random fingerprints can
///   neither grow the table nor push out the devices already in it; the flood's entries expire like any other.
/// - Answers (a `register` over HTTPS, which costs a TLS handshake) are paced: at most `answerRate` in all and at
///   most one per device per `answerGap`, so announcements cannot make ferry dial out faster than that.
/// - Our own announcement (multicast loops back) is ignored, by fingerprint.
/// - A device announcing `"protocol": "http"` (encryption off in the app), or whose fingerprint is not a
///   certificate hash, is listed as not usable and never answered: ferry speaks HTTPS only.
/// - A `register` whose JSON fingerprint differs from the hash of the client certificate it came with is refused
///   (not recorded): the certificate is the identity, and a device that claims another's fingerprint is either
///   misconfigured or impersonating; LocalSend 1.18 ignores such a register too.
/// - A device unheard for `expiry` is lost.
public struct LocalSendDeviceTable<Address: Hashable & Sendable>: Sendable {
    /// A device as discovery knows it.
    public struct Record: Equatable, Sendable {
        /// The key: the announced fingerprint in upper case (a certificate hash for every usable device).
        public var key: String
        /// The certificate hash the fingerprint names; nil when it is not 64 hex digits (an app with HTTPS off
        /// announces a random string).
        public var certificateHash: DeviceID?
        /// Its `alias` (a name, not an identity).
        public var alias: String
        /// `deviceModel`, e.g. "Pixel 7" or "Linux"; nil when not sent.
        public var deviceModel: String?
        /// `deviceType`: "mobile", "desktop", "web", "headless", "server" or what a newer app sends; nil when not
        /// sent.
        public var deviceType: String?
        /// The protocol version it speaks ("2.0", "2.1", "2.2").
        public var version: String?
        /// Where it was heard from (the datagram's or connection's source address, never a JSON field).
        public var address: Address
        /// The port of its HTTPS server (the announced `port`; 53317 when not sent).
        public var port: UInt16
        /// Its `protocol` field as sent ("https" when not sent).
        public var scheme: String
        /// True when its certificate was checked against the fingerprint: it registered with a client
        /// certificate whose hash is this key, or answered our `register` through a pinned connection.
        public var verified: Bool
        /// When it was last heard from.
        public var lastSeen: ContinuousClock.Instant

        /// Whether ferry can talk to it: HTTPS and a fingerprint that is a certificate hash.
        public var isUsable: Bool { scheme == "https" && certificateHash != nil }

        /// Why it cannot be used, for a person; nil when it can.
        public var unusableReason: String? {
            if scheme != "https" {
                return "it has encryption off (protocol \(scheme)); ferry speaks HTTPS only"
            }
            if certificateHash == nil { return "its fingerprint is not a certificate hash" }
            return nil
        }
    }

    /// What the driver must do after an event.
    public enum Action: Equatable, Sendable {
        /// A device not listed before (or listed again after it expired).
        case deviceFound(Record)
        /// A listed device changed alias, model, type, version, address, port or protocol.
        case deviceUpdated(Record)
        /// A device missed `expiry`.
        case deviceLost(Record)
        /// Multicast our announcement (`announce: true`) now.
        case announce
        /// Answer the device's announcement: `POST /api/localsend/v2/register` to its HTTPS server with its
        /// fingerprint pinned; when that fails, multicast our device info with `announce: false` (the protocol's
        /// fallback).
        case answer(Record)
    }

    /// What became of a `register` request.
    public enum RegisterVerdict: Equatable, Sendable {
        /// Recorded (answer 200 with our device info); the actions as for an announcement.
        case recorded([Action])
        /// Refused, with the reason (answer 400 and record nothing).
        case refused(String)
    }

    /// Tunables.
    public struct Configuration: Sendable {
        /// Our own certificate hash: our announcements loop back and are dropped.
        public var ownCertificateHash: DeviceID
        /// Delays after start at which we announce (the apps announce a few times at start, since multicast is
        /// lossy).
        public var startAnnouncements: [Duration]
        /// How often we announce after those, for as long as we run; every device that hears it answers, which
        /// refreshes it here.
        public var announceInterval: Duration
        /// A device unheard for this long is lost.
        public var expiry: Duration
        /// Most devices listed at once.
        public var capacity: Int
        /// Answers in all: a burst, then evenly spaced.
        public var answerRate: RateLimit
        /// Least time between two answers to one device (an app announces three times in its first seconds).
        public var answerGap: Duration

        /// The defaults: announce at 0, 1 and 3 s, then every 60 s; expiry 3.5 intervals (210 s); 256 devices; 8
        /// answers per 2 s, one per device per 10 s.
        public init(
            ownCertificateHash: DeviceID, startAnnouncements: [Duration] = [.zero, .seconds(1), .seconds(3)],
            announceInterval: Duration = .seconds(60), expiry: Duration = .seconds(210), capacity: Int = 256,
            answerRate: RateLimit = RateLimit(burst: 8, per: .seconds(2)), answerGap: Duration = .seconds(10)
        ) {
            self.ownCertificateHash = ownCertificateHash
            self.startAnnouncements = startAnnouncements
            self.announceInterval = announceInterval
            self.expiry = expiry
            self.capacity = capacity
            self.answerRate = answerRate
            self.answerGap = answerGap
        }
    }

    /// The tunables the table was made with.
    public let configuration: Configuration
    /// The devices listed now, by key.
    public private(set) var records: [String: Record] = [:]
    /// Messages of devices not listed, dropped because the table was full.
    public private(set) var droppedForCapacity = 0
    /// Answers not sent because the rate or the per-device gap was spent.
    public private(set) var answersSkipped = 0
    private var announcementsDue: [ContinuousClock.Instant] = []
    private var answers: TokenBucket?
    private var lastAnswered: [String: ContinuousClock.Instant] = [:]

    /// An empty table.
    public init(configuration: Configuration) {
        self.configuration = configuration
    }

    /// Call once when discovery starts: the first announcement now (when the schedule starts at zero), the rest
    /// from `tick`.
    public mutating func started(now: ContinuousClock.Instant) -> [Action] {
        announcementsDue = configuration.startAnnouncements.map { now + $0 }.sorted()
        return tick(now: now)
    }

    /// A multicast datagram decoded as `device` arrived from `address`.
    public mutating func announcementReceived(
        _ device: LocalSendDevice, from address: Address, now: ContinuousClock.Instant
    ) -> [Action] {
        guard let fingerprint = device.fingerprint, !fingerprint.isEmpty else { return [] }
        let hash = Self.certificateHash(fingerprint)
        if hash == configuration.ownCertificateHash { return [] }
        guard
            var actions = upsert(
                device, key: fingerprint.uppercased(), hash: hash, from: address,
                verified: false, now: now)
        else { return [] }
        if device.announce == true, let record = records[fingerprint.uppercased()], record.isUsable,
            takeAnswer(for: record.key, now: now)
        {
            actions.append(.answer(record))
        }
        return actions
    }

    /// A `register` request with body `device` arrived from `address`; `clientCertificate` is the hash of the
    /// client certificate the TLS handshake showed, nil when the client sent none (the PyPI peers and, the
    /// research says, no official app). Without a certificate the device is recorded as an announcement would be
    /// (its fingerprint a claim, checked when ferry connects to it); with one, the JSON fingerprint must name it.
    public mutating func registerReceived(
        _ device: LocalSendDevice, clientCertificate: DeviceID?, from address: Address, now: ContinuousClock.Instant
    ) -> RegisterVerdict {
        let claimed = device.fingerprint.flatMap(Self.certificateHash)
        if let clientCertificate {
            guard claimed == clientCertificate else {
                return .refused(
                    "the register's fingerprint \(device.fingerprint ?? "(none)") is not the hash of the client"
                        + " certificate")
            }
        }
        guard let claimed else { return .refused("the register has no fingerprint that is a certificate hash") }
        if claimed == configuration.ownCertificateHash {
            return .refused("the register names our own fingerprint")
        }
        var body = device
        if body.scheme == nil { body.scheme = "https" }  // it reached our HTTPS server
        let key = Self.key(claimed)
        let actions =
            upsert(body, key: key, hash: claimed, from: address, verified: clientCertificate != nil, now: now) ?? []
        return .recorded(actions)
    }

    /// The device answered our `register` through a connection pinned to its fingerprint: its body is what it says
    /// of itself, and the certificate was checked.
    public mutating func registerAnswered(
        _ device: LocalSendDevice, by record: Record, now: ContinuousClock.Instant
    ) -> [Action] {
        guard let hash = record.certificateHash else { return [] }
        var body = device
        body.fingerprint = record.key
        body.port = body.port ?? Int(record.port)
        body.scheme = record.scheme
        return upsert(body, key: record.key, hash: hash, from: record.address, verified: true, now: now) ?? []
    }

    /// The clock moved: expire silent devices and announce when due.
    public mutating func tick(now: ContinuousClock.Instant) -> [Action] {
        var actions: [Action] = []
        let expired = records.values.filter { now - $0.lastSeen > configuration.expiry }.sorted { $0.key < $1.key }
        for record in expired {
            records.removeValue(forKey: record.key)
            lastAnswered.removeValue(forKey: record.key)
            actions.append(.deviceLost(record))
        }
        lastAnswered = lastAnswered.filter { now - $0.value < configuration.answerGap }
        var announced = false
        while let due = announcementsDue.first, due <= now {
            announcementsDue.removeFirst()
            announced = true
        }
        if announced {
            actions.append(.announce)
            if announcementsDue.isEmpty { announcementsDue = [now + configuration.announceInterval] }
        }
        return actions
    }

    /// When `tick` has something to do next (an announcement or an expiry); nil when nothing is scheduled.
    public var nextDeadline: ContinuousClock.Instant? {
        let expiries = records.values.map { $0.lastSeen + configuration.expiry + .milliseconds(1) }
        return (announcementsDue + expiries).min()
    }

    /// The fingerprint's certificate hash: exactly 64 hex digits, either case (localsend-cli writes lower case).
    public static func certificateHash(_ fingerprint: String) -> DeviceID? {
        guard fingerprint.utf8.count == DeviceID.length * 2, let bytes = Hex.bytes(fingerprint.utf8) else { return nil }
        return DeviceID(bytes: bytes)
    }

    /// The key of a certificate hash: 64 upper-case hex digits.
    public static func key(_ hash: DeviceID) -> String {
        Hex.string(hash.bytes).uppercased()
    }

    /// Lists or refreshes the device; nil when it was dropped for capacity.
    private mutating func upsert(
        _ device: LocalSendDevice, key: String, hash: DeviceID?, from address: Address, verified: Bool,
        now: ContinuousClock.Instant
    ) -> [Action]? {
        var record = Record(
            key: key, certificateHash: hash, alias: device.alias, deviceModel: device.deviceModel,
            deviceType: device.deviceType, version: device.version, address: address,
            port: UInt16(device.port ?? 53317), scheme: device.scheme ?? "https", verified: verified, lastSeen: now)
        if let old = records[key] {
            // Verified stays verified while the device is heard from the same address; an unverified claim from
            // elsewhere is listed (the pin is checked when ferry connects) but no longer counts as checked. A
            // datagram's source address is spoofable, so an unverified one from that address keeps the device
            // listed (it was heard) but changes none of what was checked: its alias, model, type and port stay the
            // certificate holder's until it registers again.
            if old.verified, !verified, old.address == address {
                record = old
                record.lastSeen = now
            }
            record.verified = verified || (old.verified && old.address == address)
            records[key] = record
            var comparable = old
            comparable.lastSeen = now
            return comparable == record ? [] : [.deviceUpdated(record)]
        }
        guard records.count < configuration.capacity else {
            droppedForCapacity += 1
            return nil
        }
        records[key] = record
        return [.deviceFound(record)]
    }

    private mutating func takeAnswer(for key: String, now: ContinuousClock.Instant) -> Bool {
        if let last = lastAnswered[key], now - last < configuration.answerGap {
            answersSkipped += 1
            return false
        }
        var bucket = answers ?? TokenBucket(rate: configuration.answerRate, now: now)
        defer { answers = bucket }
        guard bucket.take(now: now) else {
            answersSkipped += 1
            return false
        }
        lastAnswered[key] = now
        return true
    }
}
