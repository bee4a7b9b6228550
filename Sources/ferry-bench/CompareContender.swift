import FerryTestSupport
import Foundation

/// One timed run of a contender: how long it took, and what the processes of each end cost (`wait4`).
struct ContenderRun: Sendable {
    var elapsed: Duration
    /// The end that reads the files (its processes, children included).
    var sender: ResourceUsage?
    /// The end that writes them; with several receivers, their sum (CPU) and largest (peak RSS), see `receiverCount`.
    var receiver: ResourceUsage?
    var receiverCount = 1

    init(elapsed: Duration, sender: ResourceUsage?, receiver: ResourceUsage?) {
        self.elapsed = elapsed
        self.sender = sender
        self.receiver = receiver
    }

    /// A ferry transfer: the sender, and every receiver together; peak RSS from the `VmHWM` samples where taken.
    init(ferry result: FerryTransferRun.Result) {
        func withPeak(_ usage: ResourceUsage?, _ sampled: Int?) -> ResourceUsage? {
            guard var usage, let sampled else { return usage }
            usage.peakResidentBytes = sampled
            return usage
        }
        elapsed = result.elapsed
        sender = withPeak(result.sender, result.senderHighWater)
        receiverCount = result.receivers.count
        let receivers = result.receivers.enumerated().compactMap { index, usage in
            withPeak(usage, index < result.receiverHighWaters.count ? result.receiverHighWaters[index] : nil)
        }
        receiver =
            receivers.count == result.receivers.count && !receivers.isEmpty
            ? ResourceUsage(
                userTime: receivers.reduce(.zero) { $0 + $1.userTime },
                systemTime: receivers.reduce(.zero) { $0 + $1.systemTime },
                peakResidentBytes: receivers.map(\.peakResidentBytes).max() ?? 0) : nil
    }
}

/// A tool in a row: its name, what it is there for, and how to run it once (the copy checked and removed).
struct Contender {
    enum Role: String {
        /// The program under test.
        case ferry
        /// What the targets compare with.
        case baseline
        /// A baseline made to sync its files as ferry does; printed, never a target.
        case fairness
    }

    var name: String
    var role: Role
    /// Why it does not run on this machine (a missing tool, an option the installed version lacks).
    var skipReason: String?
    var body: () throws -> ContenderRun

    init(_ name: String, _ role: Role, skipReason: String? = nil, _ body: @escaping () throws -> ContenderRun) {
        self.name = name
        self.role = role
        self.skipReason = skipReason
        self.body = body
    }
}

/// What a contender measured in the timed rounds of a row; figures are medians over the rounds.
struct ContenderResult {
    var name: String
    var role: Contender.Role
    var skipReason: String?
    var failure: String?
    var runs: [ContenderRun] = []

    /// Bytes of payload each run moved (to every receiver).
    var bytes: Int

    /// Median throughput in bytes per second, or nil without a run.
    var rate: Double? {
        Self.median(runs.map { Double(bytes) / max($0.elapsed.seconds, 1e-9) })
    }

    /// Median CPU seconds per GiB of payload of the sending end, of the receiving end (per receiver), of both.
    var senderCPU: Double? { cpuPerGiB { $0.sender.map { $0.cpuTime.seconds } } }
    var receiverCPU: Double? {
        cpuPerGiB { run in run.receiver.map { $0.cpuTime.seconds / Double(run.receiverCount) } }
    }
    var bothCPU: Double? {
        cpuPerGiB { run in
            guard let sender = run.sender, let receiver = run.receiver else { return nil }
            return (sender.cpuTime + receiver.cpuTime).seconds
        }
    }

    /// Median CPU seconds of the sending end per run (not per GiB): user + system, user, system.
    var senderSeconds: Double? { senderMedian(\.cpuTime) }
    var senderUserSeconds: Double? { senderMedian(\.userTime) }
    var senderSystemSeconds: Double? { senderMedian(\.systemTime) }

    private func senderMedian(_ time: KeyPath<ResourceUsage, Duration>) -> Double? {
        let values = runs.compactMap { $0.sender?[keyPath: time].seconds }
        return values.count == runs.count ? Self.median(values) : nil
    }

    /// Median elapsed milliseconds of a run, and median CPU milliseconds of the receiving end (where measured).
    var medianMilliseconds: Double? { Self.median(runs.map { $0.elapsed.seconds * 1000 }) }
    var receiverMilliseconds: Double? {
        let values = runs.compactMap { $0.receiver?.cpuTime.seconds }
        return values.count == runs.count ? Self.median(values).map { $0 * 1000 } : nil
    }

    /// Largest peak RSS over the rounds of the sending end, and of the receiving end, in bytes.
    var senderPeak: Int? { runs.compactMap { $0.sender?.peakResidentBytes }.max() }
    var receiverPeak: Int? { runs.compactMap { $0.receiver?.peakResidentBytes }.max() }

    var measured: Bool { failure == nil && skipReason == nil && !runs.isEmpty }

    private func cpuPerGiB(_ seconds: (ContenderRun) -> Double?) -> Double? {
        let values = runs.compactMap(seconds)
        guard values.count == runs.count else { return nil }
        return Self.median(values).map { $0 / (Double(bytes) / Double(1 << 30)) }
    }

    static func median(_ values: [Double]) -> Double? {
        guard !values.isEmpty else { return nil }
        let sorted = values.sorted()
        let middle = sorted.count / 2
        return sorted.count % 2 == 1 ? sorted[middle] : (sorted[middle - 1] + sorted[middle]) / 2
    }
}
