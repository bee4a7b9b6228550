import FerrySystem
import FerryWire
import Dispatch
import Synchronization

/// Set when the sender whose offer is being checked for files held already leaves (its link closes) or the offer is
/// cancelled: hashing a held file stops between chunks (PROTOCOL.md 11.10 rule 10).
final class HashStop: Sendable {
    private let flag = Atomic<Bool>(false)

    /// Hashing stops at the next chunk.
    func set() { flag.store(true, ordering: .relaxed) }

    /// Whether `set` was called.
    var isSet: Bool { flag.load(ordering: .relaxed) }
}

/// A file the receive directory holds already, byte for byte as an offered digest says: its name as spelled on disk
/// (relative to the receive directory) and its status when it was hashed, which must still be its status when the
/// sender's `fileEnd` arrives (another program may have saved over it meanwhile).
struct HeldFile: Sendable {
    /// The relative name, as spelled on disk.
    var name: String
    /// Device, inode, size, modification and change time when it was hashed.
    var status: FerrySystem.FileStatus
}

/// The bytes of held files the receiver hashes for one sender (by device), over time: a bucket of `limit` bytes that
/// fills again at `limit` per `window`. An offer takes what is there before it hashes and gives back what it did not
/// use, so two offers of one sender never hash at once past the bucket, and a sender that offers the same held file
/// again and again makes the receiver read it at most `limit` bytes a `window` (it was up to `limit` per offer).
/// Pure: the caller passes the time.
struct AlreadyThereBudget: Sendable {
    /// Bytes a full bucket holds.
    let limit: UInt64
    /// How long an empty bucket takes to fill.
    let window: Duration
    private var buckets: [DeviceID: (bytes: UInt64, at: ContinuousClock.Instant)] = [:]
    /// Buckets kept at most; full ones are dropped first (a full bucket is as good as none).
    static let maxBuckets = 256

    init(limit: UInt64, window: Duration) {
        self.limit = limit
        self.window = window
    }

    /// Buckets kept now.
    var bucketCount: Int { buckets.count }

    /// The bytes `device` may hash at `now`.
    func available(_ device: DeviceID, now: ContinuousClock.Instant) -> UInt64 {
        guard let bucket = buckets[device] else { return limit }
        let refill = window > .zero ? Double(limit) * ((now - bucket.at) / window) : Double(limit)
        return UInt64(min(Double(limit), Double(bucket.bytes) + max(0, refill)))
    }

    /// Takes every byte `device` may hash now (the bucket is empty afterwards).
    mutating func take(_ device: DeviceID, now: ContinuousClock.Instant) -> UInt64 {
        let granted = available(device, now: now)
        buckets[device] = (0, now)
        if buckets.count > Self.maxBuckets {
            buckets = buckets.filter { available($0.key, now: now) < limit }
            while buckets.count > Self.maxBuckets, let oldest = buckets.min(by: { $0.value.at < $1.value.at }) {
                buckets[oldest.key] = nil
            }
        }
        return granted
    }

    /// Puts back the bytes of a `take` that were not hashed.
    mutating func giveBack(_ unused: UInt64, to device: DeviceID, now: ContinuousClock.Instant) {
        let bytes = min(limit, available(device, now: now) + unused)
        buckets[device] = (bytes, now)
    }
}

/// For tests: holds the hashing of held files (rule 10) before each offered file until `open`, and counts the files
/// it let through (`TransferEngine.holdHeldHashing`), as `TransferEngineProbe`'s gates hold other steps.
final class AlreadyThereGate: Sendable {
    /// Signalled each time hashing reaches the gate.
    let entered = DispatchSemaphore(value: 0)
    /// Signalled when the hashing of an offer is over.
    let finished = DispatchSemaphore(value: 0)
    private let opened = DispatchSemaphore(value: 0)
    private let count = Atomic<Int>(0)

    /// Offered files that reached the gate.
    var entries: Int { count.load(ordering: .relaxed) }

    /// Called by the hashing before each file: waits until the gate is open.
    func pass() {
        count.add(1, ordering: .relaxed)
        entered.signal()
        opened.wait()
        opened.signal()  // it stays open
    }

    /// Lets every waiting and later file through.
    func open() { opened.signal() }
}
