import FerryWire
import Testing

@testable import FerryStateMachines

/// The compression policy as exact decision lists: each chunk's decision ("zstd", "zlib" or "raw"; "zstd-3" at a
/// level other than 1), with a tried chunk's outcome recorded as it would be by the sender.
@Suite struct CompressionPolicyTests {
    /// One chunk: what the sender measured of the one before (nil: nothing), and whether a tried chunk shrinks.
    struct Chunk {
        var pace: CompressionPolicy.Pace?
        var shrinks = true
    }

    /// Runs `chunks` through `policy` and returns the decisions; a tried chunk of 1000 bytes is recorded as 500
    /// bytes when it shrinks, and as not shrinking otherwise.
    static func run(_ policy: inout CompressionPolicy, _ chunks: [Chunk]) -> [String] {
        chunks.map { chunk in
            guard let choice = policy.choice(after: chunk.pace) else { return "raw" }
            policy.record(rawLength: 1000, compressedLength: chunk.shrinks ? 500 : nil)
            return choice.level == 1 ? choice.algorithm.rawValue : "\(choice.algorithm.rawValue)-\(choice.level)"
        }
    }

    static func chunks(_ count: Int, pace: CompressionPolicy.Pace? = nil, shrinks: Bool = true) -> [Chunk] {
        Array(repeating: Chunk(pace: pace, shrinks: shrinks), count: count)
    }

    /// A chunk of 1 MiB whose cycle took 10 ms, `waited` of them waiting for the link, 2 of them compressing.
    static func pace(waited: Double) -> CompressionPolicy.Pace {
        .init(rawBytes: 1 << 20, seconds: 0.010, waitedSeconds: waited / 1000, compressSeconds: 0.002)
    }

    static func started(
        _ mode: CompressionMode, _ available: [CompressionAlgorithm] = [.zstd, .zlib],
        alreadyCompressed: Bool = false, ladder: [CompressionLevelController.Step]? = nil
    ) -> CompressionPolicy {
        var policy = CompressionPolicy(mode: mode, available: available, ladder: ladder, warmUpChunks: 0)
        policy.fileStarted(alreadyCompressed: alreadyCompressed)
        return policy
    }

    @Test func noneNeverCompresses() {
        var policy = Self.started(.none)
        #expect(Self.run(&policy, Self.chunks(3)) == ["raw", "raw", "raw"])
    }

    @Test func forcedModesAlwaysTry() {
        var zlib = Self.started(.zlib, alreadyCompressed: true)
        // Neither media, nor failures, nor a CPU-bound pace stop a forced algorithm, nor change its level.
        #expect(
            Self.run(&zlib, Self.chunks(12, pace: Self.pace(waited: 0), shrinks: false))
                == Array(repeating: "zlib", count: 12))
        var zstd = Self.started(.zstd)
        #expect(Self.run(&zstd, Self.chunks(2, shrinks: false)) == ["zstd", "zstd"])
    }

    @Test func forcedButUnavailableFallsBackToTheBest() {
        var zstd = Self.started(.zstd, [.zlib])
        #expect(Self.run(&zstd, Self.chunks(2)) == ["zlib", "zlib"])
        var nothing = Self.started(.zlib, [])
        #expect(Self.run(&nothing, Self.chunks(2)) == ["raw", "raw"])
    }

    @Test func autoUsesTheBestAvailable() {
        var policy = Self.started(.auto)
        #expect(Self.run(&policy, Self.chunks(3)) == ["zstd", "zstd", "zstd"])
        var zlibOnly = Self.started(.auto, [.zlib])
        #expect(Self.run(&zlibOnly, Self.chunks(2)) == ["zlib", "zlib"])
        var nothing = Self.started(.auto, [])
        #expect(Self.run(&nothing, Self.chunks(2)) == ["raw", "raw"])
    }

    @Test func autoSkipsAlreadyCompressedFiles() {
        var policy = Self.started(.auto, alreadyCompressed: true)
        #expect(Self.run(&policy, Self.chunks(3)) == ["raw", "raw", "raw"])
        policy.fileStarted(alreadyCompressed: false)
        #expect(Self.run(&policy, Self.chunks(2)) == ["zstd", "zstd"])
    }

    /// Consecutive failures back off for 1, 2, 4, ... 64 chunks; each re-probe that fails doubles the pause.
    @Test func failuresBackOffExponentiallyUpTo64() {
        var policy = Self.started(.auto)
        var expected: [String] = []
        for pause in [1, 2, 4, 8, 16, 32, 64, 64, 64] {
            expected += ["zstd"] + Array(repeating: "raw", count: pause)
        }
        #expect(Self.run(&policy, Self.chunks(expected.count, shrinks: false)) == expected)
    }

    @Test func aSuccessResetsTheBackoff() {
        var policy = Self.started(.auto)
        let fail = Chunk(shrinks: false)
        let pass = Chunk()
        // The outcome of a chunk sent raw is never recorded, so `pass` there only fills the place.
        let chunks = [fail, pass, pass, fail, pass, fail, pass, pass, pass, fail, pass]
        #expect(
            Self.run(&policy, chunks)
                == ["zstd", "raw", "zstd", "zstd", "raw", "zstd", "raw", "raw", "zstd", "zstd", "raw"])
    }

    /// 90% of raw or more counts as a failure; less as a success.
    @Test func successMeansBelow90Percent() {
        var policy = Self.started(.auto)
        #expect(policy.choice(after: nil) == .init(.zstd, level: 1))
        policy.record(rawLength: 1000, compressedLength: 900)
        #expect(policy.choice(after: nil) == nil)
        #expect(policy.choice(after: nil) == .init(.zstd, level: 1))
        policy.record(rawLength: 1000, compressedLength: 899)
        #expect(policy.choice(after: nil) == .init(.zstd, level: 1))
        policy.record(rawLength: 0, compressedLength: 0)  // Nothing to shrink: a failure, not a division by zero.
        #expect(policy.choice(after: nil) == nil)
    }

    @Test func aNewFileClearsTheBackoff() {
        var policy = Self.started(.auto)
        #expect(Self.run(&policy, Self.chunks(4, shrinks: false)) == ["zstd", "raw", "zstd", "raw"])
        policy.fileStarted(alreadyCompressed: false)
        #expect(Self.run(&policy, Self.chunks(2)) == ["zstd", "zstd"])
    }

    /// Files of one chunk each continue the backoff of the files before them (1, 2, 4, ... 64 files skipped); a
    /// larger file clears it, and a small file that compresses ends it.
    @Test func smallFilesContinueTheBackoff() {
        var policy = Self.started(.auto)
        var decisions: [String] = []
        for _ in 0..<16 {
            policy.fileStarted(alreadyCompressed: false, singleChunk: true)
            decisions += Self.run(&policy, Self.chunks(1, shrinks: false))
        }
        let expected = ["zstd", "raw", "zstd", "raw", "raw", "zstd", "raw", "raw", "raw", "raw", "zstd"]
        #expect(decisions == expected + Array(repeating: "raw", count: 5))
        policy.fileStarted(alreadyCompressed: false, singleChunk: false)
        #expect(Self.run(&policy, Self.chunks(1)) == ["zstd"])
        policy.fileStarted(alreadyCompressed: false, singleChunk: true)
        #expect(Self.run(&policy, Self.chunks(1)) == ["zstd"])  // the larger file compressed: no backoff
    }

    /// The level follows the controller (4 chunks an epoch, a chunk's pace arriving with the next one): waiting
    /// for the link half the time climbs to the highest level predicted to fit, waiting for nothing steps down.
    @Test func autoFollowsTheLevelController() {
        var policy = Self.started(.auto, ladder: CompressionLevelControllerTests.ladder)
        let linkBound = Self.chunks(5, pace: Self.pace(waited: 5))
        #expect(Self.run(&policy, linkBound) == ["zstd", "zstd", "zstd", "zstd", "zstd-3"])
        let cpuBound = Self.chunks(4, pace: Self.pace(waited: 0))
        #expect(Self.run(&policy, cpuBound) == ["zstd-3", "zstd-3", "zstd-3", "zstd-2"])
    }

    /// CPU-bound at level 1: raw.
    @Test func autoStepsAsideWhenCPUBound() {
        var policy = Self.started(.auto)
        let cpuBound = Self.chunks(6, pace: Self.pace(waited: 0))
        #expect(Self.run(&policy, cpuBound) == ["zstd", "zstd", "zstd", "zstd", "raw", "raw"])
    }

    /// A chunk sent raw because of its content (media, backoff) says nothing of the levels: its pace is not counted.
    @Test func pacesOfChunksSentRawForTheirContentAreNotCounted() {
        var policy = Self.started(.auto, alreadyCompressed: true)
        #expect(Self.run(&policy, Self.chunks(8, pace: Self.pace(waited: 0))) == Array(repeating: "raw", count: 8))
        #expect(policy.controller.level == 1)
        policy.fileStarted(alreadyCompressed: false)
        // Backoff: tried 0, 2, 5 (each a failure); only the paces that follow a tried chunk count: 3 of 4.
        let failing = Self.chunks(7, pace: Self.pace(waited: 0), shrinks: false)
        #expect(Self.run(&policy, failing) == ["zstd", "raw", "zstd", "raw", "raw", "zstd", "raw"])
        #expect(policy.controller.level == 1)
    }

    /// The level is the link's, not the file's: a new file keeps it.
    @Test func theLevelCarriesAcrossFiles() {
        var policy = Self.started(.auto)
        #expect(
            Self.run(&policy, Self.chunks(5, pace: Self.pace(waited: 0))) == ["zstd", "zstd", "zstd", "zstd", "raw"])
        policy.fileStarted(alreadyCompressed: false)
        #expect(Self.run(&policy, Self.chunks(1, pace: Self.pace(waited: 0))) == ["raw"])
    }

    /// Over a link that is not loopback the sender starts at `linkStartLevel` (zstd's default, 3): the highest step
    /// at or below the level asked for, at least the first compressing one; forced modes keep their level.
    @Test func startsAtTheLevelAskedFor() {
        #expect(CompressionLevelController.linkStartLevel == 3)
        var link = CompressionPolicy(
            mode: .auto, available: [.zstd, .zlib], startLevel: CompressionLevelController.linkStartLevel)
        #expect(link.choice(after: nil) == .init(.zstd, level: 3))
        // Level 4 is not on zstd's ladder: the step below it.
        #expect(CompressionPolicy(mode: .auto, available: [.zstd], startLevel: 4).controller.level == 3)
        #expect(CompressionPolicy(mode: .auto, available: [.zstd], startLevel: 0).controller.level == 1)
        #expect(CompressionPolicy(mode: .auto, available: [.zlib], startLevel: 3).controller.level == 1)
        var forced = CompressionPolicy(mode: .zstd, available: [.zstd], startLevel: 3)
        #expect(forced.choice(after: nil) == .init(.zstd, level: CompressionAlgorithm.zstd.defaultLevel))
        #expect(CompressionPolicy(mode: .auto, available: [.zstd]).controller.level == 1)
    }

    /// Without zstd, auto has two steps: zlib at level 1, or raw.
    @Test func autoWithZlibOnlyChoosesBetweenLevel1AndRaw() {
        var policy = Self.started(.auto, [.zlib])
        #expect(policy.controller.ladder.map(\.level) == [0, 1])
        let cpuBound = Self.chunks(5, pace: Self.pace(waited: 0))
        #expect(Self.run(&policy, cpuBound) == ["zlib", "zlib", "zlib", "zlib", "raw"])
    }
}

/// `upcoming`: what the chunk source prepares the next chunk with ahead of time is the choice the policy then makes
/// without a pace, through the backoff and in every mode.
@Suite struct CompressionPolicyUpcomingTests {
    @Test func upcomingIsTheNextChoiceWithoutAPace() {
        for mode in [CompressionMode.none, .zlib, .zstd, .auto] {
            var policy = CompressionPolicyTests.started(mode)
            for shrinks in [false, true, false, false, false, true, true, false] {
                let upcoming = policy.upcoming
                let choice = policy.choice(after: nil)
                #expect(upcoming == choice, "\(mode)")
                if choice != nil { policy.record(rawLength: 1000, compressedLength: shrinks ? 500 : nil) }
            }
        }
        var compressed = CompressionPolicyTests.started(.auto, alreadyCompressed: true)
        #expect(compressed.upcoming == nil && compressed.choice(after: nil) == nil)
    }
}
