import Testing

@testable import FerryStateMachines

/// The level controller fed synthetic paces: the level after each epoch (4 chunks), as exact lists.
@Suite struct CompressionLevelControllerTests {
    typealias Pace = CompressionLevelController.Pace
    typealias Step = CompressionLevelController.Step

    /// A ladder of the tests' own, so that the expected levels do not move when zstd's table is tuned.
    static let ladder = [
        Step(level: 0, cost: 0, size: 4),
        Step(level: 1, cost: 1, size: 1),
        Step(level: 2, cost: 1.5, size: 0.9),
        Step(level: 3, cost: 2, size: 0.85),
        Step(level: 4, cost: 4, size: 0.8),
        Step(level: 5, cost: 8, size: 0.78),
    ]

    /// Feeds `epochs` epochs of paces (the same pace for every chunk of an epoch, given by the level it is at) and
    /// returns the level after each.
    static func run(
        _ controller: inout CompressionLevelController, epochs: Int, _ pace: (Int) -> Pace
    ) -> [Int] {
        (0..<epochs).map { _ in
            let current = pace(controller.level)
            for _ in 0..<CompressionLevelController.epochChunks { controller.record(current) }
            return controller.level
        }
    }

    /// A chunk of 1 MiB: its cycle, of which `waited` waiting for the link and `compress` compressing (ms).
    static func pace(_ seconds: Double, waited: Double, compress: Double) -> Pace {
        Pace(rawBytes: 1 << 20, seconds: seconds / 1000, waitedSeconds: waited / 1000, compressSeconds: compress / 1000)
    }

    /// The pump of a sender over a link of `linkRate` bytes a second: per chunk 1 ms of its own work and 2.5 ms of
    /// compressing per unit of cost, a quarter of the chunk on the wire at level 1 (the ladder's sizes relative to
    /// that); the cycle is the longer of the pump's work and the link's time, the rest of it waiting.
    static func slowLink(level: Int, linkRate: Double = 12.5e6) -> Pace {
        let step = ladder.first { $0.level == level }!
        let work = 0.001 + 0.0025 * step.cost
        let link = 0.25 * step.size * Double(1 << 20) / linkRate
        let cycle = max(work, link)
        return Pace(rawBytes: 1 << 20, seconds: cycle, waitedSeconds: cycle - work, compressSeconds: 0.0025 * step.cost)
    }

    @Test func startsAtTheFirstCompressingStep() {
        let controller = CompressionLevelController(ladder: Self.ladder, warmUpChunks: 0)
        #expect(controller.level == 1)
        #expect(CompressionLevelController(ladder: Self.ladder, startStep: 0, warmUpChunks: 0).level == 0)
    }

    /// The first 16 paces (the pipeline filling, nothing waits) are ignored.
    @Test func theWarmUpIsIgnored() {
        var controller = CompressionLevelController(ladder: Self.ladder)
        let cpuBound = Self.pace(4, waited: 0, compress: 3)
        for _ in 0..<(CompressionLevelController.warmUpChunks + 3) { controller.record(cpuBound) }
        #expect(controller.level == 1)
        controller.record(cpuBound)
        #expect(controller.level == 0)
        // After a move 8 paces are ignored (the window still holds the step before's chunks), then an
        // epoch of 4, raw slower than level 1 was.
        let linkBound = Self.pace(7, waited: 3.5, compress: 0)
        for _ in 0..<(CompressionLevelController.settleChunks + 3) { controller.record(linkBound) }
        #expect(controller.level == 0)
        controller.record(linkBound)
        #expect(controller.level == 1)
    }

    /// While settling after a move, a chunk more than twice as slow as the epoch before ends the settling and is
    /// measured (and, being that slow, decides at once).
    @Test func aMuchSlowerChunkEndsTheSettling() {
        var controller = CompressionLevelController(ladder: Self.ladder)
        for _ in 0..<(CompressionLevelController.warmUpChunks + 4) {
            controller.record(Self.pace(5, waited: 0, compress: 4))
        }
        #expect(controller.level == 0)
        controller.record(Self.pace(80, waited: 79, compress: 0))
        #expect(controller.level == 1)
    }

    /// Nothing is decided before an epoch is full; paces of no bytes or no time are ignored.
    @Test func decidesOncePerEpoch() {
        var controller = CompressionLevelController(ladder: Self.ladder, warmUpChunks: 0)
        let cpuBound = Self.pace(4, waited: 0, compress: 3)
        for _ in 1..<CompressionLevelController.epochChunks { controller.record(cpuBound) }
        controller.record(Pace(rawBytes: 0, seconds: 1, waitedSeconds: 0, compressSeconds: 0))
        controller.record(Pace(rawBytes: 1 << 20, seconds: 0, waitedSeconds: 0, compressSeconds: 0))
        #expect(controller.level == 1)
        controller.record(cpuBound)
        #expect(controller.level == 0)
    }

    /// Raw and waiting for the link: compress, at the first level (nothing is known yet of its cost).
    @Test func linkBoundRawStartsCompressing() {
        var controller = CompressionLevelController(ladder: Self.ladder, startStep: 0, warmUpChunks: 0)
        #expect(Self.run(&controller, epochs: 1) { _ in Self.pace(10, waited: 5, compress: 0) } == [1])
    }

    /// Waiting for the link with room to spare: straight to the highest step predicted to fit, not step by step.
    @Test func linkBoundClimbsToTheHighestStepThatFits() {
        var plenty = CompressionLevelController(ladder: Self.ladder, warmUpChunks: 0)
        #expect(Self.run(&plenty, epochs: 1) { _ in Self.pace(80, waited: 70, compress: 3) } == [5])
        // Other work 3.5 ms, compressing 4: level 2 is predicted at 9.5 ms against a link of 9 (7.65 with the margin);
        // the next step is still tried, the measurement decides.
        var tight = CompressionLevelController(ladder: Self.ladder, warmUpChunks: 0)
        #expect(Self.run(&tight, epochs: 1) { _ in Self.pace(10, waited: 2.5, compress: 4) } == [2])
        // The same cycle at level 3, whose next step (4) costs twice as much a byte (more than `costlyStep`):
        // predicted at 11.5 ms against a link of 9.4, the pump would be the bottleneck there for 12 chunks (level 5
        // after 3 over the 100 Mbit/s link, 3.4 times the cost: tried and left again at 17-39 MB/s), so it stays.
        var costly = CompressionLevelController(ladder: Self.ladder, startStep: 3, warmUpChunks: 0)
        #expect(Self.run(&costly, epochs: 1) { _ in Self.pace(10, waited: 2.5, compress: 4) } == [3])
        // Other work 4 ms, compressing 1: level 3 (6 ms against 7.2), not 4 (8 against 6.8).
        var some = CompressionLevelController(ladder: Self.ladder, warmUpChunks: 0)
        #expect(Self.run(&some, epochs: 1) { _ in Self.pace(10, waited: 5, compress: 1) } == [3])
    }

    /// CPU-bound: one step down an epoch, to raw, and no further.
    @Test func cpuBoundStepsDownToRaw() {
        var controller = CompressionLevelController(ladder: Self.ladder, startStep: 3, warmUpChunks: 0)
        #expect(Self.run(&controller, epochs: 4) { _ in Self.pace(4, waited: 0.1, compress: 3) } == [2, 1, 0, 0])
    }

    /// CPU-bound after a climb (the machine got busy): straight down to the step predicted to be fastest with the
    /// link as measured before (20 ms a chunk at level 1), not one step an epoch: at level 1 the pump needs 16.5 ms
    /// and the link 20, at 2 the pump 23.75, at raw the link 80.
    @Test func cpuBoundJumpsDownAsFarAsTheLinkKeepsUp() {
        var controller = CompressionLevelController(ladder: Self.ladder, warmUpChunks: 0)
        let levels = Self.run(&controller, epochs: 2) { level in
            level == 1 ? Self.pace(20, waited: 16, compress: 2) : Self.pace(60, waited: 0, compress: 58)
        }
        #expect(levels == [4, 1])
    }

    /// A step moved to whose first chunk takes more than twice as long as the last epoch's is left after it: here
    /// raw over a slow link (80 ms a chunk against 5 at level 1), tried because level 1 looked CPU-bound.
    @Test func aMuchSlowerStepIsLeftAfterOneChunk() {
        var controller = CompressionLevelController(ladder: Self.ladder, warmUpChunks: 0)
        for _ in 0..<CompressionLevelController.epochChunks { controller.record(Self.pace(5, waited: 0, compress: 4)) }
        #expect(controller.level == 0)
        controller.record(Self.pace(80, waited: 79, compress: 0))
        #expect(controller.level == 1)
        // Not so much slower: the epoch runs its 4 chunks.
        var close = CompressionLevelController(ladder: Self.ladder, warmUpChunks: 0)
        for _ in 0..<CompressionLevelController.epochChunks { close.record(Self.pace(5, waited: 0, compress: 4)) }
        close.record(Self.pace(9, waited: 8, compress: 0))
        #expect(close.level == 0)
    }

    /// Not waiting, but the window filling by more than a chunk during the epoch (the link is slower than the pump,
    /// which has not had to wait yet: a transfer's start), or more than 4 chunks in flight: not CPU-bound.
    @Test func aFillingWindowIsNotCPUBound() {
        var controller = CompressionLevelController(ladder: Self.ladder, warmUpChunks: 0)
        for chunk in 0..<CompressionLevelController.epochChunks {
            var pace = Self.pace(5, waited: 0, compress: 4)
            pace.inFlightBytes = (2 + chunk) << 20
            controller.record(pace)
        }
        #expect(controller.level == 1)
        // A window that stays more than 4 chunks full: the link holds them, not CPU-bound either.
        for _ in 0..<CompressionLevelController.epochChunks {
            var pace = Self.pace(5, waited: 0, compress: 4)
            pace.inFlightBytes = 5 << 20
            controller.record(pace)
        }
        #expect(controller.level == 1)
        // Two chunks in flight, steadily: the link takes what the pump gives at once, CPU-bound.
        for _ in 0..<CompressionLevelController.epochChunks {
            var pace = Self.pace(5, waited: 0, compress: 4)
            pace.inFlightBytes = 2 << 20
            controller.record(pace)
        }
        #expect(controller.level == 0)
    }

    /// Between the two bounds (waiting 5-15% of the time): the step stays.
    @Test func balancedStays() {
        var controller = CompressionLevelController(ladder: Self.ladder, startStep: 2, warmUpChunks: 0)
        #expect(Self.run(&controller, epochs: 3) { _ in Self.pace(10, waited: 1, compress: 6) } == [2, 2, 2])
    }

    /// Loopback: the receiver shares the CPU, so the pump waits "for the link" at every level, but each level is
    /// slower than the one below. The controller tries level 2, finds it slower, tries raw, finds it faster and
    /// stays raw; level 1 is tried again once its measurement is forgotten (16 epochs), for one epoch, and having
    /// lost again is remembered twice as long (32).
    @Test func onLoopbackRawWinsAndLevelsAreRetriedRarely() {
        var controller = CompressionLevelController(ladder: Self.ladder, warmUpChunks: 0)
        let paces = [
            0: Self.pace(3.2, waited: 1, compress: 0),
            1: Self.pace(4.8, waited: 1, compress: 3),
            2: Self.pace(5.5, waited: 0.9, compress: 3.9),
        ]
        // Higher levels are slower still.
        let levels = Self.run(&controller, epochs: 60) { paces[$0] ?? Self.pace(7, waited: 0.5, compress: 6) }
        #expect(Array(levels.prefix(3)) == [2, 1, 0])
        // Level 1 was last measured in epoch 3 and is forgotten after epoch 19: tried in epoch 20, left in 21; then
        // forgotten after epoch 53: tried in 54.
        let zeros = { (count: Int) in Array(repeating: 0, count: count) }
        #expect(Array(levels[3...]) == zeros(16) + [1] + zeros(33) + [1] + zeros(6))
    }

    /// A 100 Mbit/s link: from level 1 the controller jumps to the best level of the model (4: the link's time,
    /// 16.8 ms a chunk, is longer than the pump's, 11 ms; at 5 the pump takes 21 ms, predicted past the link's
    /// 16.4, so 5 is not tried), and stays.
    @Test func overASlowLinkItSettlesOnTheBestLevel() {
        let throughput = Self.ladder.map { 1 / Self.slowLink(level: $0.level).seconds }
        let best = Self.ladder[throughput.indices.max { throughput[$0] < throughput[$1] }!].level
        #expect(best == 4)
        var controller = CompressionLevelController(ladder: Self.ladder, warmUpChunks: 0)
        let levels = Self.run(&controller, epochs: 16) { Self.slowLink(level: $0) }
        #expect(levels == Array(repeating: 4, count: 16))
    }

    /// A link fast enough that level 1 is best: level 2 makes the pump the bottleneck (CPU-bound, slower). Level 1
    /// waits for the link, level 2 is known not to pay, and yet raw is not tried: it would put 4 times the bytes on
    /// a link that was the bottleneck (over 100 Mbit/s, seconds of raw chunks draining from the window).
    @Test func waitingForTheWireNeverTriesRaw() {
        var controller = CompressionLevelController(ladder: Self.ladder, warmUpChunks: 0)
        let levels = Self.run(&controller, epochs: 12) { Self.slowLink(level: $0, linkRate: 60e6) }
        #expect(levels == [2] + Array(repeating: 1, count: 11))
        #expect(controller.throughput(atStep: 0) == nil)
    }

    /// Over a slow link the data's compressibility changes along the file: level 2, tried where the text compresses
    /// less, waits for the link and is slower in raw bytes, yet carries as many wire bytes a second as level 1: the
    /// wait is for the wire, and raw (8 times the bytes) is not tried. On loopback (the next test's paces with
    /// their wire lengths) level 2 carries clearly fewer wire bytes, and raw is tried once the transfer has run
    /// long enough for the try's risk (`probeBudget`; here after 40 balanced epochs, 1.6 s).
    @Test func theWireRateTellsASlowLinkFromABusyReceiver() {
        func pace(_ ms: Double, waited: Double, wire: Int) -> Pace {
            Pace(
                rawBytes: 1 << 20, seconds: ms / 1000, waitedSeconds: waited / 1000, compressSeconds: 0.003,
                wireBytes: wire)
        }
        // 12.5 MB/s of wire: level 1 at 8x (10 ms a chunk), level 2 where the data compresses 6x (14 ms).
        let ladder = Array(Self.ladder.prefix(3))
        var link = CompressionLevelController(ladder: ladder, warmUpChunks: 0)
        let slow = Self.run(&link, epochs: 6) { level in
            level == 1 ? pace(10.5, waited: 6, wire: 131_072) : pace(14, waited: 9, wire: 174_762)
        }
        #expect(slow == [2, 1, 1, 1, 1, 1])
        // Loopback: level 2 waits as much, its wire rate a third lower.
        var loopback = CompressionLevelController(ladder: ladder, warmUpChunks: 0)
        #expect(Self.run(&loopback, epochs: 40) { _ in pace(10, waited: 1, wire: 1 << 18) }.allSatisfy { $0 == 1 })
        let local = Self.run(&loopback, epochs: 4) { level in
            switch level {
            case 0: pace(3.2, waited: 1, wire: 1 << 20)
            case 1: pace(4.8, waited: 1, wire: 262_144)
            default: pace(5.5, waited: 0.9, wire: 200_000)
            }
        }
        #expect(local == [2, 1, 0, 0])
    }

    /// CPU-bound at level 1 early in a transfer, the link never measured: the first chunks of a tar of text compress
    /// 13 times and the pump is the bottleneck for a moment. Raw puts each chunk's raw length on a link that carried
    /// only 20 MB/s so far (not the ladder's 4 times level 1's bytes: the data compresses better than the ladder's
    /// average): the 9 chunks before raw is measured could take 48 ms more each, 0.436 s, so raw is not tried
    /// before the transfer has run ten times that (epoch 273 of 16 ms; with the ladder's sizes it was epoch 68);
    /// without wire lengths, at once.
    @Test func cpuBoundWithTheLinkUnknownRisksRawOnlyOnALongTransfer() {
        let fast = Pace(rawBytes: 1 << 20, seconds: 0.004, waitedSeconds: 0, compressSeconds: 0.002, wireBytes: 80_000)
        var controller = CompressionLevelController(ladder: Self.ladder, warmUpChunks: 0)
        let levels = Self.run(&controller, epochs: 275) { _ in fast }
        #expect(levels.prefix(272).allSatisfy { $0 == 1 })
        #expect(levels[272] == 0)
        var blind = CompressionLevelController(ladder: Self.ladder, warmUpChunks: 0)
        var unknown = fast
        unknown.wireBytes = 0
        #expect(Self.run(&blind, epochs: 1) { _ in unknown } == [0])
    }

    /// Over a 100 Mbit/s link the data turns highly compressible (a run of near-identical headers in a tar of
    /// /usr/include, 100-200 times): level 1's epoch still waits a quarter of its cycle, the socket's queue draining,
    /// and carries 35 MB/s of wire bytes from the pump, more than the link, so level 2 (measured at the link's
    /// 12.5) looks like "clearly fewer wire bytes", a receiver that shares the CPU. Raw would put 1 MiB a chunk on
    /// a link that carried at most 35 MB/s: the 9 chunks before it is measured could take 0.23 s more, against
    /// the 0.11 s the transfer has run. Level 1 stays (it went raw, and the text after that run went 8 times larger).
    @Test func waitingForTheLinkRisksRawOnlyWithinTheProbeBudget() {
        func pace(_ ms: Double, waited: Double, wire: Int) -> Pace {
            Pace(
                rawBytes: 1 << 20, seconds: ms / 1000, waitedSeconds: waited / 1000, compressSeconds: 0.003,
                wireBytes: wire)
        }
        var controller = CompressionLevelController(ladder: Array(Self.ladder.prefix(3)), warmUpChunks: 0)
        var epochs = 0
        let levels = Self.run(&controller, epochs: 5) { level in
            epochs += 1
            if level == 2 { return pace(14, waited: 9, wire: 174_762) }
            return epochs == 1 ? pace(10.5, waited: 6, wire: 131_072) : pace(4, waited: 1, wire: 140_000)
        }
        #expect(levels == [2, 1, 1, 1, 1])
        #expect(controller.throughput(atStep: 0) == nil)
    }

    /// Over a 100 Mbit/s link, measured while link-bound at level 1, the pump has a slow moment (the machine is busy:
    /// a cycle of 25 ms, not waiting at all). CPU-bound, but raw is predicted at 4 times the link's 21 ms a chunk:
    /// it stays at level 1, where it used to take the one step down whatever the prediction.
    @Test func cpuBoundStaysWhenNoStepBelowIsPredictedFaster() {
        var controller = CompressionLevelController(ladder: Array(Self.ladder.prefix(2)), warmUpChunks: 0)
        var epochs = 0
        let levels = Self.run(&controller, epochs: 4) { level in
            epochs += 1
            return epochs == 1 ? Self.slowLink(level: level) : Self.pace(25, waited: 0, compress: 10)
        }
        #expect(levels == [1, 1, 1, 1])
    }

    /// A step measured recently and slower is not taken again, whatever the waiting says.
    @Test func aStepKnownSlowerIsNotTaken() {
        var controller = CompressionLevelController(ladder: Self.ladder, startStep: 0, warmUpChunks: 0)
        // Raw, waiting half the time: level 1, where the pump does not wait but goes twice as fast.
        let levels = Self.run(&controller, epochs: 3) { level in
            level == 0 ? Self.pace(10, waited: 5, compress: 0) : Self.pace(5, waited: 0, compress: 3)
        }
        // At level 1, CPU-bound, the step below is known (and slower): it stays.
        #expect(levels == [1, 1, 1])
        #expect(controller.throughput(atStep: 0) != nil)
    }
}

/// Rule 3: waits for the window that ended with the link holding nothing (`Pace.receiverWaitedSeconds`) are waits
/// for the receiving process, and compression steps aside; the same waits with the link holding bytes climb.
extension CompressionLevelControllerTests {
    /// A chunk of 1 MiB: its cycle, of which `waited` waiting for the window, all of it with the link empty;
    /// `wire` bytes on the wire (0: unknown, so that going raw risks nothing the controller can estimate, as on a
    /// link whose rate it cannot tell; `aReceiverStallOverASlowLinkRisksRawOnlyOnALongTransfer` gives them).
    static func receiverPace(_ ms: Double, waited: Double, compress: Double, wire: Int = 0) -> Pace {
        Pace(
            rawBytes: 1 << 20, seconds: ms / 1000, waitedSeconds: waited / 1000, compressSeconds: compress / 1000,
            wireBytes: wire, receiverWaitedSeconds: waited / 1000)
    }

    /// Waiting for the receiver with the wire rate known: raw (4 times the bytes) is the same gamble as a blind
    /// step down, and is taken only within `probeBudget` of the time so far. Over a 100 Mbit/s link a receiver
    /// stalls for a moment (its first writeback) while the text compresses 8 times: level 1 waits half of a 20 ms
    /// cycle for it, the link empty. The 9 chunks before raw is measured could take 60 ms more each at the wire
    /// rate seen (0.54 s): raw is tried only once the transfer has run ten times that (epoch 68 of 80 ms), where
    /// it went raw at once and the raw chunks in the window took seconds to drain.
    @Test func aReceiverStallOverASlowLinkRisksRawOnlyOnALongTransfer() {
        var controller = CompressionLevelController(ladder: Self.ladder, warmUpChunks: 0)
        let levels = Self.run(&controller, epochs: 68) { _ in
            Self.receiverPace(20, waited: 10, compress: 3, wire: 1 << 18)
        }
        #expect(levels.prefix(67).allSatisfy { $0 == 1 }, "\(levels)")
        #expect(levels[67] == 0)
        #expect(abs((controller.lastEpoch?.receiverWaited ?? 0) - 0.5) < 1e-9)
    }

    /// Loopback text: level 1 waits half its cycle for a receiver that had everything (the receiver shares the
    /// CPU), and goes to raw after one epoch; raw, measured a little slower (the machine's load moved), is kept:
    /// level 1's faster epoch waited for the receiver too, so its ratio is not what made it faster.
    @Test func waitingForTheReceiverGoesRawAndStays() {
        var controller = CompressionLevelController(ladder: Self.ladder, warmUpChunks: 0)
        let levels = Self.run(&controller, epochs: 40) { level in
            level == 0 ? Self.receiverPace(9, waited: 4, compress: 0) : Self.receiverPace(8, waited: 4, compress: 3)
        }
        #expect(levels == Array(repeating: 0, count: 40))
        #expect(abs((controller.lastEpoch?.receiverWaited ?? 0) - 4.0 / 9) < 1e-9)
        #expect(abs(controller.lastEpoch?.waited ?? 1) < 1e-9)
    }

    /// The same cycles, the waits ending with the link holding bytes: waiting for the link, it climbs.
    @Test func theSameWaitsWithTheLinkFullClimb() {
        var controller = CompressionLevelController(ladder: Self.ladder, warmUpChunks: 0)
        let levels = Self.run(&controller, epochs: 1) { _ in
            var pace = Self.receiverPace(8, waited: 4, compress: 3)
            pace.receiverWaitedSeconds = 0
            return pace
        }
        #expect(levels[0] > 1)
    }

    /// A slow link to a slow receiver: level 1 waits for the receiver (the link not full), raw then waits for the
    /// link (its bytes are 4 times as many) and is slower: back to level 1, which stays, raw being known to wait
    /// for the link.
    @Test func rawWaitingForTheLinkIsNotTakenForTheReceiver() {
        var controller = CompressionLevelController(ladder: Self.ladder, warmUpChunks: 0)
        let levels = Self.run(&controller, epochs: 8) { level in
            level == 0
                ? Self.pace(40, waited: 30, compress: 0) : Self.receiverPace(20, waited: 10, compress: 3)
        }
        #expect(levels == [0, 1, 1, 1, 1, 1, 1, 1])
    }
}

extension CompressionLevelControllerTests {
    /// Raw, waiting for the receiver: no level is moved up to, even one measured faster while the pump was busy
    /// (on a loaded machine, level 1's epoch came out faster by chance): compressing speeds up no receiver.
    @Test func atRawWaitingForTheReceiverNoLevelPullsItUp() {
        var controller = CompressionLevelController(ladder: Self.ladder, startStep: 1, warmUpChunks: 0)
        var epochs = 0
        let levels = Self.run(&controller, epochs: 6) { level in
            epochs += 1
            // Level 1 CPU-bound and fast once (it steps down to raw), then raw waits for the receiver, slower.
            return level == 1 ? Self.pace(4, waited: 0, compress: 3) : Self.receiverPace(6, waited: 3, compress: 0)
        }
        #expect(levels == [0, 0, 0, 0, 0, 0])
    }
}
