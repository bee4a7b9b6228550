/// Chooses how hard to compress, from what the sender measured: a zstd level, or none at all.
///
/// Compression pays only while the link, not the CPU, is the bottleneck, and a higher level pays only while the
/// compressor still keeps up with the link. The controller sees the pipeline from the sender's pump, which for each
/// chunk reads and compresses it, queues it and waits for the link (the window full, or the link writer above its
/// high-water mark) before asking for the next one. Each chunk's `Pace` gives that cycle's time, the part of it
/// spent waiting for the link and the part spent compressing. Every `epochChunks` chunks at one step it decides,
/// as `zstd --adapt` does from its output buffer:
///
/// 1. it remembers the epoch's throughput (raw bytes per second) for the step; a neighbouring step measured in
///    the last `memoryEpochs` epochs as more than `tolerance` faster wins (this is what makes compression step
///    aside on loopback, where the receiver shares the CPU and "waiting for the link" is waiting for it);
/// 2. the pump waited for the link for `linkBoundShare` of the time or more: the link is the bottleneck, spare
///    CPU buys a better ratio. Unless the next step was measured recently (and was not faster), it climbs to the
///    highest step whose compressing time, predicted from this epoch's with the ladder's relative costs, still
///    fits in the cycle the link leaves (predicted with the ladder's relative sizes; the link's time for these
///    chunks is the cycle, or less when their wire bytes at the highest wire rate seen take less: the wait was for
///    the bytes of chunks before them), or tries the next step,
///    unless that costs more than `costlyStep` times as much and is predicted past the link; from raw, to the
///    first level. When the next step is known not to pay, it tries the step below if that is not known and either puts
///    at most `cheapDown` times the bytes on the wire, or the step above waited for the link as well and carried
///    clearly fewer bytes a second on the wire (`wireTolerance`; not faster, when wire lengths are unknown): then
///    "waiting for the link" is waiting for a receiver that shares the CPU (loopback), where less compression is
///    faster. Never raw from zstd on the strength of waiting alone: over a slow link such a
///    try costs the window's raw chunks draining at the link's rate;
/// 3. the pump waited for the window `linkBoundShare` of the time or more with the link holding next to nothing
///    unacknowledged when each wait ended (less than `linkQueueBytes`), or held back by the peer's receive window
///    for `receiveWindowShare` of the wait (`Pace.receiverWaitedSeconds`): the bytes in flight had all crossed the
///    link, or the receiver's socket buffer was full; they waited for the receiving process, which no ratio
///    speeds up (nor is a step above moved to by rule 1 then). On one
///    machine (loopback, namespaces joined by a veth pair) that process shares the CPU the compressor takes, and
///    over a link that is the bottleneck the window's bytes wait before it instead: it goes to raw, unless raw
///    was measured recently (and was not faster, by rule 1);
/// 4. it waited less than `cpuBoundShare` of the time, and the window did not fill by more than a chunk during the
///    epoch nor holds more than `cpuBoundInFlightChunks` (a link slower than the pump by a little fills it slowly
///    before the pump waits): the CPU is the
///    bottleneck, it steps down (the last step
///    down is to raw), unless the next step down was measured recently (and was not faster): to the step with the
///    shortest predicted cycle, the longer of the pump's work and the link's time (once the link was measured
///    while link-bound: these chunks' wire bytes at the highest wire rate seen, scaled by the ladder's sizes),
///    when that is shorter than the cycle now; when the link was never
///    measured, one step, but to raw from zstd only once the transfer has run ten times what that try could cost
///    at the wire rate seen so far (`probeBudget`);
/// 5. otherwise it stays.
///
/// After a move the paces of the chunks still in flight are not counted (at most `settleChunks`). The first epoch at
/// a step moved to ends after its first chunk when that took more than twice as long per chunk as the epoch
/// before: trying raw over a slow link then costs one chunk, not four.
///
/// Measurements older than `memoryEpochs` epochs are forgotten, so a step that lost is tried again now and then
/// (the link or the load may have changed); each time it loses again it is remembered twice as long (up to
/// `longestMemory`), so on loopback trying level 1 costs one epoch in 17, then in 33, 65, ...
///
/// Pure: the driver measures, the controller decides; the tests feed it synthetic paces.
public struct CompressionLevelController: Sendable, Equatable {
    /// The level a transfer over a link that is not loopback starts at (`CompressionPolicy`'s `startLevel`): zstd's
    /// default, what `rsync -z --compress-choice=zstd` uses. Nothing is known of the link before the first epoch
    /// (after `warmUpChunks`), and over a slow link that is most of a short transfer: on a tar of /usr/include
    /// (1 MiB chunks, each with its previous chunk as prefix) level 3 puts 10% fewer bytes on the wire than level 1,
    /// and where the data is highly redundant it is even faster than level 1 (44 MiB that compress 100-200 times:
    /// 0.11 s against 0.16 s of compressing on the 2-core test machine). A link that is faster than level 3 on one
    /// core shows as CPU-bound after the warm-up, and the controller steps down from there.
    public static let linkStartLevel = 3
    /// Chunks measured at one step before deciding.
    public static let epochChunks = 4
    /// Waiting this share of the cycle or more means the link is the bottleneck (or, waiting for the receiver,
    /// the receiving process is).
    public static let linkBoundShare = 0.15
    /// A wait for the window that ends with fewer bytes than this unacknowledged on the link (queued, in the
    /// socket, or on the way) was a wait for the receiver: over a link that is the bottleneck the window's bytes
    /// wait before it (over a 100 Mbit/s link, 0.3-1 MB when a chunk is acknowledged), while to a receiver on the
    /// same machine (loopback, a veth pair) they have all crossed and wait in the receiver.
    public static let linkQueueBytes = 64 << 10
    /// A wait for the window during which the peer's receive window held the link back for this share of the time
    /// or more was a wait for the receiver as well, however many bytes were left unacknowledged: its socket buffer
    /// was full (raw chunks to a receiver on the same machine fill it, and the rest waits in ours).
    public static let receiveWindowShare = 0.5
    /// Waiting less than this share means the CPU is.
    public static let cpuBoundShare = 0.05
    /// CPU-bound also means the link took what the pump gave at once: at most this many chunks were in flight.
    public static let cpuBoundInFlightChunks = 4
    /// How long a step's throughput is remembered, in epochs; doubled (up to 16 times) each time the step loses
    /// again, so that trying a step that keeps losing (raw over a slow link, whose epoch takes long) costs less and
    /// less.
    public static let memoryEpochs = 16
    /// The longest a step is remembered, in epochs.
    public static let longestMemory = 256
    /// Link-bound, a step down is tried without more evidence when it puts at most this many times the bytes on the
    /// wire (one level of zstd, not raw).
    public static let cheapDown = 1.25
    /// A step down from zstd to raw, with the link never measured, may risk this share of the time so far.
    public static let probeBudget = 0.1
    /// Link-bound, the next step up is tried even when predicted not to fit, unless it costs more than this many
    /// times the current one a byte and is predicted past the link's time.
    public static let costlyStep = 1.5
    /// Waiting for the wire, two steps carry the same wire bytes per second within this fraction.
    public static let wireTolerance = 0.2
    /// A remembered step must be this much faster (a fraction) to be moved to.
    public static let tolerance = 0.05
    /// Paces ignored at the start: while the window, the link writer's queue and the socket buffers (and a
    /// shaper's queue) fill, the pump does not wait whatever the link, and would look CPU-bound (over a 100 Mbit/s
    /// link the first 12 chunks did not wait).
    public static let warmUpChunks = 16
    /// Paces ignored after each move: the chunks of the step before still fill the window (8 MiB) and their
    /// draining would be counted against the new one.
    public static let settleChunks = 8

    /// zstd levels for 1 MiB chunks of text (a tar of /usr/include, each chunk one frame with the file's previous
    /// chunk as its prefix, as `zstdPrefixed` chunks are; measured with libzstd on the 2-core test machine):
    /// compressing time and size relative to level 1 (8.2x; without the prefix 5.1x). Level 4 is left out (no
    /// smaller than 3 at twice its cost), and so is everything past 8 (no smaller).
    public static let zstdLadder: [Step] = [
        Step(level: 0, cost: 0, size: 8.2),
        Step(level: 1, cost: 1.0, size: 1.0),
        Step(level: 2, cost: 1.2, size: 0.946),
        Step(level: 3, cost: 1.6, size: 0.897),
        Step(level: 5, cost: 5.4, size: 0.822),
        Step(level: 6, cost: 7.2, size: 0.788),
        Step(level: 7, cost: 9.7, size: 0.775),
        Step(level: 8, cost: 11, size: 0.765),
    ]

    /// The steps, raw first.
    public let ladder: [Step]
    /// The current step (index into `ladder`).
    public private(set) var step: Int

    private var warmUp: Int
    /// Paces ignored after each move (`settleChunks`, none when there is no warm-up either).
    private let settleChunks: Int
    /// Per chunk, the last epoch's seconds, while the first epoch at a step moved to runs.
    private var secondsPerChunkBefore: Double?
    private var chunks = 0
    private var rawBytes = 0
    private var seconds = 0.0
    private var waitedSeconds = 0.0
    private var receiverWaitedSeconds = 0.0
    private var compressSeconds = 0.0
    /// Wire bytes of the epoch's chunks; nil once one chunk's is unknown.
    private var wireBytes: Int? = 0
    /// The window's fill after the epoch's first and last chunk.
    private var inFlightFirst = 0
    private var inFlightLast = 0
    private var epoch = 0
    /// Seconds of every pace recorded so far, warm-up included.
    private var elapsed = 0.0
    /// Per step: the last throughput measured there and the epoch it was measured in.
    private var measured: [Int: Measured] = [:]
    /// The highest wire rate of an epoch (any step) and the epoch it was measured in; replaced by a lower one once
    /// older than `memoryEpochs`.
    private var peakWire: PeakWire?
    /// The link's time per chunk per unit of the ladder's relative size, as last measured while link-bound.
    private var linkSecondsPerSize: Double?
    /// The last epoch's throughput and share of waiting, for the log.
    public private(set) var lastEpoch: Epoch?

    private struct PeakWire: Sendable, Equatable {
        var rate: Double
        var epoch: Int
    }

    private struct Measured: Sendable, Equatable {
        var throughput: Double
        /// Wire bytes per second (nil when a chunk's wire length was unknown).
        var wireRate: Double?
        /// The pump waited for the link for `linkBoundShare` of the time or more.
        var linkBound: Bool
        /// It waited for the receiver (the link holding nothing) that long: the step's ratio did not matter.
        var receiverBound = false
        var epoch: Int
        /// Epochs it is remembered for: `memoryEpochs`, doubled each time the step is tried again and loses.
        var lifetime: Int
    }

    /// Starts at `startStep` (by default the first compressing step: compressing shows what the data gives),
    /// ignoring the first `warmUpChunks` paces.
    public init(ladder: [Step] = Self.zstdLadder, startStep: Int = 1, warmUpChunks: Int = Self.warmUpChunks) {
        precondition(!ladder.isEmpty && ladder[0].level == 0, "the ladder starts with raw")
        self.ladder = ladder
        self.warmUp = max(warmUpChunks, 0)
        self.settleChunks = min(max(warmUpChunks, 0), Self.settleChunks)
        self.step = min(max(startStep, 0), ladder.count - 1)
    }

    /// The level to compress the next chunk with (0: send it raw).
    public var level: Int { ladder[step].level }

    /// The throughput last measured at `step` if it is recent, in raw bytes per second.
    public func throughput(atStep step: Int) -> Double? {
        guard let entry = measured[step], epoch - entry.epoch <= entry.lifetime else { return nil }
        return entry.throughput
    }

    /// Records one chunk sent at the current step; at the end of an epoch, decides the step for the next ones.
    public mutating func record(_ pace: Pace) {
        guard pace.seconds > 0, pace.rawBytes > 0 else { return }
        elapsed += pace.seconds
        if let before = secondsPerChunkBefore, pace.seconds > 2 * before, chunks == 0, warmUp > 0 {
            // Settling after a move, and already more than twice as slow: measure it now.
            warmUp = 0
        }
        guard warmUp == 0 else {
            warmUp -= 1
            return
        }
        chunks += 1
        if chunks == 1 { inFlightFirst = pace.inFlightBytes }
        inFlightLast = pace.inFlightBytes
        rawBytes += pace.rawBytes
        seconds += pace.seconds
        let waited = min(max(pace.waitedSeconds, 0), pace.seconds)
        waitedSeconds += waited
        receiverWaitedSeconds += min(max(pace.receiverWaitedSeconds, 0), waited)
        compressSeconds += min(max(pace.compressSeconds, 0), pace.seconds)
        wireBytes = pace.wireBytes > 0 ? wireBytes.map { $0 + pace.wireBytes } : nil
        if chunks < Self.epochChunks {
            // A step just moved to whose chunks take more than twice as long is known to lose at once: over a
            // slow link a raw epoch is expensive.
            guard let before = secondsPerChunkBefore, seconds / Double(chunks) > 2 * before else { return }
        }
        decide()
    }

    private mutating func decide() {
        epoch += 1
        let throughput = Double(rawBytes) / seconds
        // Waiting for the link, and for the receiver (which no compressing speeds up).
        let receiverWaited = receiverWaitedSeconds / seconds
        let waited = (waitedSeconds - receiverWaitedSeconds) / seconds
        let waitedAtAll = waitedSeconds / seconds
        let perChunk = (seconds: seconds / Double(chunks), compress: compressSeconds / Double(chunks))
        let rawBytesPerChunk = rawBytes / chunks
        let epochWire = wireBytes
        let chunks0 = chunks
        let seconds0 = seconds
        let inFlightLast0 = inFlightLast
        let previousLifetime = measured[step]?.lifetime
        measured[step] = Measured(
            throughput: throughput, wireRate: wireBytes.map { Double($0) / seconds },
            linkBound: waited >= Self.linkBoundShare, receiverBound: receiverWaited >= Self.linkBoundShare,
            epoch: epoch, lifetime: Self.memoryEpochs)
        lastEpoch = Epoch(throughput: throughput, waited: waited, receiverWaited: receiverWaited)
        if let wire = wireBytes.map({ Double($0) / seconds }),
            peakWire.map({ wire >= $0.rate || epoch - $0.epoch > Self.memoryEpochs }) ?? true
        {
            peakWire = PeakWire(rate: wire, epoch: epoch)
        }
        let previous = step
        let wirePerChunk = epochWire.map { Double($0) / Double(chunks0) }
        let linkRate = self.linkRate
        defer {
            if waited >= Self.linkBoundShare {
                linkSecondsPerSize = perChunk.seconds / max(ladder[previous].size, .leastNonzeroMagnitude)
            }
            secondsPerChunkBefore = step != previous ? perChunk.seconds : nil
            if step != previous { warmUp = settling(inFlight: inFlightLast0, rawPerChunk: rawBytesPerChunk) }
        }
        chunks = 0
        rawBytes = 0
        seconds = 0
        waitedSeconds = 0
        receiverWaitedSeconds = 0
        compressSeconds = 0
        wireBytes = 0
        // 1. A neighbour known to be faster: this step lost, and is remembered longer if it had lost before.
        for neighbour in [step - 1, step + 1] where ladder.indices.contains(neighbour) {
            // Not up while waiting for the receiver, nor to a step measured waiting for it, unless the link is the
            // bottleneck here: a ratio speeds up no receiver (the link was not full), the difference is the
            // load's, not the level's, and moving up for it would undo rule 3.
            if neighbour > step, waited < Self.linkBoundShare,
                receiverWaited >= Self.linkBoundShare || measured[neighbour]?.receiverBound == true
            {
                continue
            }
            if let known = self.throughput(atStep: neighbour), known > throughput * (1 + Self.tolerance) {
                if let previousLifetime {
                    measured[step]?.lifetime = min(previousLifetime * 2, Self.longestMemory)
                }
                step = neighbour
                return
            }
        }
        // The other neighbours are known and not faster, or unknown: explore an unknown one, the way the waiting
        // points first.
        let up = step + 1 < ladder.count && self.throughput(atStep: step + 1) == nil
        let down = step > 0 && self.throughput(atStep: step - 1) == nil
        if waited >= Self.linkBoundShare {
            // 2. Link-bound: up; when up is known not to pay, down (on loopback, where waiting for the link is
            // waiting for a receiver that shares the CPU, raw may be faster).
            if up {
                // The link's own time per chunk: while link-bound, the cycle is set by it, unless these chunks' wire
                // bytes take less at the link's rate: the wait was for the bytes of chunks before them (the window's
                // lag), as where the data turns 100 times compressible (a climb there to level 8, predicted from the
                // cycle, went on to run at 34 MB/s when the text after it compressed 5 times again).
                step = highestFitting(
                    cycle: perChunk.seconds, waited: perChunk.seconds * waited, perChunk.compress,
                    linkTime: min(perChunk.seconds, linkTime(wirePerChunk, linkRate) ?? perChunk.seconds))
            } else if down, downPays(throughput),
                probeFits(
                    step - 1, cycle: perChunk.seconds, wireRate: epochWire.map { Double($0) / seconds0 },
                    peak: measured.values.compactMap(\.wireRate).max(), rawPerChunk: rawBytesPerChunk)
            {
                // (Raw after zstd risks at most `probeBudget` of the time so far here too: an epoch that waited for
                // a slow link as the data turned highly compressible carried more wire bytes a second than the
                // step above had, the socket's queue draining, and looked like waiting for a receiver.)
                step -= 1
            }
        } else if receiverWaited >= Self.linkBoundShare {
            // 3. Waiting for a receiver that had everything sent: the link is not full, so a better ratio buys
            // nothing, and compressing costs CPU that a receiver on the same machine needs (loopback, a veth pair;
            // text went at 0.34-0.54x random bytes there): raw, unless raw was measured recently waiting for the
            // link (then the link is the bottleneck at raw, as over a slow link to a slow disk). Raw after zstd
            // risks at most `probeBudget` of the time so far, as a blind step down does: a receiver that stalls
            // for a moment over a slow link (its first writeback, 0.3 s at the start of a 100 Mbit/s transfer)
            // looks the same, and there raw's 8 MiB in the window took seconds to drain.
            let wireRate = epochWire.map { Double($0) / seconds0 }
            let peak = measured.values.compactMap(\.wireRate).max()
            if step > 0, !rawWaitedForTheLink,
                probeFits(0, cycle: perChunk.seconds, wireRate: wireRate, peak: peak, rawPerChunk: rawBytesPerChunk)
            {
                step = 0
            }
        } else if waitedAtAll < Self.cpuBoundShare, down, inFlightLast - inFlightFirst <= rawBytesPerChunk,
            inFlightLast <= Self.cpuBoundInFlightChunks * rawBytesPerChunk
        {
            // (Not when the window filled by more than a chunk during the epoch, or holds more than 4: the link
            // is slower than the pump, which merely has not had to wait yet.)
            // 4. CPU-bound: down, as far as the link last measured is predicted to keep up.
            step = lowerTarget(
                cycle: perChunk.seconds, waited: perChunk.seconds * waited, perChunk.compress,
                wireRate: epochWire.map { Double($0) / perChunk.seconds / Double(chunks0) },
                rawPerChunk: rawBytesPerChunk, linkTime: linkTime(wirePerChunk, linkRate))
        }
    }

    /// The link's rate in wire bytes a second, as far as the pump knows it: the highest wire rate of an epoch in
    /// the last `memoryEpochs` (of any step, the current epoch's included; `peakWire`). Not only of epochs that
    /// waited for the link: one that waits for the acknowledgements of the text before a run of near-identical
    /// headers carries a hundredth of the link's rate (with a window of 16 MiB a tar of /usr/include waited for the
    /// first time there), and the pump's rate at the start (the socket's buffers filling) may exceed the link's:
    /// an estimate on the high side, which predicts a climb to fit less often and a step down (CPU-bound) to cost
    /// less on the wire.
    private var linkRate: Double? { peakWire?.rate }

    /// The link's time for one chunk of `wirePerChunk` bytes at `linkRate` (nil when either is unknown).
    private func linkTime(_ wirePerChunk: Double?, _ linkRate: Double?) -> Double? {
        guard let wirePerChunk, let linkRate, linkRate > 0 else { return nil }
        return wirePerChunk / linkRate
    }

    /// Paces ignored after a move: the chunks of the step before still in flight (and the first of the new step,
    /// compressed ahead at the old one and again), at most `settleChunks`; all of them when the fill is unknown.
    private func settling(inFlight: Int, rawPerChunk: Int) -> Int {
        guard inFlight > 0, rawPerChunk > 0 else { return settleChunks }
        return min(settleChunks, (inFlight + rawPerChunk - 1) / rawPerChunk + 1)
    }

    /// Raw was measured recently, waiting for the link.
    private var rawWaitedForTheLink: Bool {
        guard let raw = measured[0], epoch - raw.epoch <= raw.lifetime else { return false }
        return raw.linkBound
    }

    /// Link-bound, the step above known not to pay: whether trying the step below might. Waiting for the wire, a
    /// step that puts more bytes on it is slower by as much: going from zstd to raw multiplies the bytes by 4-8, and
    /// over a slow link the raw chunks that fill the window (8 MiB) then take seconds to drain (what cost a
    /// 100 Mbit/s link a third of its throughput). So the step below is tried only when its bytes are few more
    /// (`cheapDown`), or when the step above was measured waiting for the link as well and yet was not faster:
    /// then the wait is not for the wire but for a receiver that shares the CPU (loopback), where less
    /// compression may be faster.
    private func downPays(_ throughput: Double) -> Bool {
        guard step > 0 else { return false }
        if ladder[step - 1].size <= ladder[step].size * Self.cheapDown { return true }
        guard step + 1 < ladder.count, let above = measured[step + 1], epoch - above.epoch <= above.lifetime,
            above.linkBound, let here = measured[step]
        else { return false }
        // Waiting for the wire, the wire carries as much at every step (however the data's compressibility
        // changes along the file); the step above carrying clearly less is what shows the wait is for something
        // else. Without wire lengths, the raw throughput must do.
        if let aboveWire = above.wireRate, let hereWire = here.wireRate {
            return aboveWire < hereWire * (1 - Self.wireTolerance)
        }
        return above.throughput <= throughput
    }

    /// CPU-bound: the step below with the shortest predicted cycle, the longer of the pump's work (its other work
    /// plus compressing at the step's relative cost) and the link's time (as last measured while link-bound,
    /// scaled by the step's relative size), if that is shorter than the cycle now; when the link was never
    /// measured, `blindStepDown`.
    private func lowerTarget(
        cycle: Double, waited: Double, _ compress: Double, wireRate: Double?, rawPerChunk: Int, linkTime: Double?
    ) -> Int {
        let current = ladder[step]
        // (Only once the link was measured while the pump waited for it: until then the highest wire rate seen is
        // the pump's own, and the link would look exactly as slow as the pump.)
        guard let linkSecondsPerSize, current.cost > 0 else {
            return blindStepDown(cycle: cycle, wireRate: wireRate, rawPerChunk: rawPerChunk)
        }
        let other = max(cycle - waited - compress, 0)
        var best = step - 1
        var bestCycle = Double.infinity
        for candidate in stride(from: step - 1, through: 0, by: -1) {
            let work = other + compress * ladder[candidate].cost / current.cost
            // The link's time for this epoch's chunks at the candidate: from their wire bytes at the link's rate
            // when both are known (a raw chunk puts its raw length on the wire), else as last measured.
            let link: Double
            if let linkTime, let linkRate {
                let scaled = linkTime * ladder[candidate].size / current.size
                link = ladder[candidate].level == 0 ? max(scaled, Double(rawPerChunk) / linkRate) : scaled
            } else {
                link = linkSecondsPerSize * ladder[candidate].size
            }
            let predicted = max(work, link)
            if predicted < bestCycle * (1 - Self.tolerance) {
                best = candidate
                bestCycle = predicted
            }
        }
        // None predicted faster than now (raw over a link that was measured slow: the pump merely had a slow
        // moment, the machine being busy): stay.
        return bestCycle < cycle ? best : step
    }

    /// CPU-bound, the link never measured: the next step down, unless that puts many more bytes on the wire (raw
    /// after zstd) and trying it could cost more than `probeBudget` of the time so far. The link carries at least
    /// what it carried in this epoch; at that rate, the step's chunks that fill the window before its first is
    /// measured (`settleChunks` + 1) would each take their wire bytes over it instead of the cycle now. Over a slow
    /// link that is most of a second (at the start of a 100 Mbit/s transfer of text, where the first chunks
    /// compress 20 times and the pump is the bottleneck for a moment); on loopback a tenth of that.
    private func blindStepDown(cycle: Double, wireRate: Double?, rawPerChunk: Int) -> Int {
        probeFits(step - 1, cycle: cycle, wireRate: wireRate, rawPerChunk: rawPerChunk) ? step - 1 : step
    }

    /// Whether moving down to `target` risks at most `probeBudget` of the time so far: always when it puts few
    /// more bytes on the wire (`cheapDown`) or the wire rate is unknown; else the chunks that fill the window
    /// before the first at `target` is measured (`settleChunks` + 1), each taking its wire bytes at the link's
    /// rate (at least `wireRate`, this epoch's, or `peak`, the best remembered) instead of the cycle now. A raw
    /// chunk's wire bytes are known, its raw length (`rawPerChunk`), not predicted with the ladder's average sizes:
    /// where the data compresses 100 times (a run of near-identical headers in a tar of /usr/include), the
    /// ladder's 8.2 times level 1's bytes predicted a twelfth of what raw puts on the wire, and the controller
    /// went raw over a 100 Mbit/s link just before text that compresses 5 times.
    private func probeFits(
        _ target: Int, cycle: Double, wireRate: Double?, peak: Double? = nil, rawPerChunk: Int
    ) -> Bool {
        guard ladder[target].size > ladder[step].size * Self.cheapDown, let wireRate, wireRate > 0 else { return true }
        let predicted = wireRate * cycle * ladder[target].size / ladder[step].size
        let wirePerChunk = ladder[target].level == 0 ? max(predicted, Double(rawPerChunk)) : predicted
        let risk = Double(Self.settleChunks + 1) * max(wirePerChunk / max(peak ?? 0, wireRate) - cycle, 0)
        return risk <= Self.probeBudget * elapsed
    }

    /// The highest step above the current one whose predicted compressing time fits in the cycle the link would
    /// leave at that step, at least the next one unless that one is costly and predicted past the link
    /// (`costlyStep`; then the current one).
    ///
    /// At step k the link needs `linkTime * size(k) / size(current)` per chunk, where `linkTime` is the link's time
    /// for one chunk at the current step (the cycle while link-bound, or less: rule 2); the pump's work (the cycle
    /// minus waiting) becomes `other + compress * cost(k) /
    /// cost(current)`, and it must stay below `1 - linkBoundShare` of the link's time, so the link stays the
    /// bottleneck with the margin the controller needs to notice it.
    private func highestFitting(cycle: Double, waited: Double, _ compress: Double, linkTime: Double) -> Int {
        let current = ladder[step]
        guard step > 0, current.cost > 0, compress > 0 else { return step + 1 }
        let other = max(cycle - waited - compress, 0)
        var best = step
        for candidate in (step + 1)..<ladder.count {
            let work = other + compress * ladder[candidate].cost / current.cost
            let link = linkTime * ladder[candidate].size / current.size
            if work <= link * (1 - Self.linkBoundShare) { best = candidate }
        }
        guard best == step else { return best }
        // None fits with the margin: the next step is still tried (the measurement decides), unless it costs more
        // than `costlyStep` times this one a byte and is predicted past the link's time: the pump would be the
        // bottleneck for the settling and the epoch, 12 chunks (level 5 after 3, 3.4 times the cost: over the
        // 100 Mbit/s link tried and left again at 17-39 MB/s, not waiting, in 6 transfers of 8).
        let next = ladder[step + 1]
        let work = other + compress * next.cost / current.cost
        let link = linkTime * next.size / current.size
        return next.cost > current.cost * Self.costlyStep && work > link ? step : step + 1
    }
}
