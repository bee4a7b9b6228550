import FerryWire
import Testing

@testable import FerryStateMachines

/// The compression policy as exact decision lists: each chunk's decision ("zstd", "zlib" or "raw"), with a tried
/// chunk's outcome recorded as it would be by the sender.
@Suite struct CompressionPolicyTests {
    /// One chunk: whether the sender waited for the link last time, and whether a tried chunk shrinks.
    struct Chunk {
        var linkBound = true
        var shrinks = true
    }

    /// Runs `chunks` through `policy` and returns the decisions; a tried chunk of 1000 bytes is recorded as 500
    /// bytes when it shrinks, and as not shrinking otherwise.
    static func run(_ policy: inout CompressionPolicy, _ chunks: [Chunk], firstIndex: Int = 0) -> [String] {
        chunks.enumerated().map { offset, chunk in
            guard let algorithm = policy.algorithm(forChunk: firstIndex + offset, linkBound: chunk.linkBound) else {
                return "raw"
            }
            policy.record(rawLength: 1000, compressedLength: chunk.shrinks ? 500 : nil)
            return algorithm.rawValue
        }
    }

    static func chunks(_ count: Int, linkBound: Bool = true, shrinks: Bool = true) -> [Chunk] {
        Array(repeating: Chunk(linkBound: linkBound, shrinks: shrinks), count: count)
    }

    static func started(
        _ mode: CompressionMode, _ available: [CompressionAlgorithm] = [.zstd, .zlib],
        alreadyCompressed: Bool = false
    ) -> CompressionPolicy {
        var policy = CompressionPolicy(mode: mode, available: available)
        policy.fileStarted(alreadyCompressed: alreadyCompressed)
        return policy
    }

    @Test func noneNeverCompresses() {
        var policy = Self.started(.none)
        #expect(Self.run(&policy, Self.chunks(3)) == ["raw", "raw", "raw"])
    }

    @Test func forcedModesAlwaysTry() {
        var zlib = Self.started(.zlib, alreadyCompressed: true)
        // Neither media, nor failures, nor a fast link stop a forced algorithm.
        #expect(Self.run(&zlib, Self.chunks(6, linkBound: false, shrinks: false)) == Array(repeating: "zlib", count: 6))
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
        #expect(policy.algorithm(forChunk: 0, linkBound: true) == .zstd)
        policy.record(rawLength: 1000, compressedLength: 900)
        #expect(policy.algorithm(forChunk: 1, linkBound: true) == nil)
        #expect(policy.algorithm(forChunk: 2, linkBound: true) == .zstd)
        policy.record(rawLength: 1000, compressedLength: 899)
        #expect(policy.algorithm(forChunk: 3, linkBound: true) == .zstd)
        policy.record(rawLength: 0, compressedLength: 0)  // Nothing to shrink: a failure, not a division by zero.
        #expect(policy.algorithm(forChunk: 4, linkBound: true) == nil)
    }

    @Test func aNewFileClearsTheBackoff() {
        var policy = Self.started(.auto)
        #expect(Self.run(&policy, Self.chunks(4, shrinks: false)) == ["zstd", "raw", "zstd", "raw"])
        policy.fileStarted(alreadyCompressed: false)
        #expect(Self.run(&policy, Self.chunks(2)) == ["zstd", "zstd"])
    }

    /// After 4 chunks in a row without waiting for the link, only every 8th chunk of the run is tried.
    @Test func fastLinkSendsRawExceptEvery8thChunk() {
        var policy = Self.started(.auto)
        let expected =
            ["zstd", "zstd", "zstd"] + Array(repeating: "raw", count: 7) + ["zstd"]
            + Array(repeating: "raw", count: 7) + ["zstd"]
        #expect(Self.run(&policy, Self.chunks(expected.count, linkBound: false)) == expected)
    }

    @Test func waitingForTheLinkEndsTheFastRun() {
        var policy = Self.started(.auto)
        let chunks = Self.chunks(5, linkBound: false) + Self.chunks(1) + Self.chunks(4, linkBound: false)
        #expect(
            Self.run(&policy, chunks)
                == ["zstd", "zstd", "zstd", "raw", "raw", "zstd", "zstd", "zstd", "zstd", "raw"])
    }

    /// The link state is the link's, not the file's: a new file does not restart the count.
    @Test func theFastRunCarriesAcrossFiles() {
        var policy = Self.started(.auto)
        #expect(Self.run(&policy, Self.chunks(4, linkBound: false)) == ["zstd", "zstd", "zstd", "raw"])
        policy.fileStarted(alreadyCompressed: false)
        #expect(
            Self.run(&policy, Self.chunks(8, linkBound: false)) == Array(repeating: "raw", count: 6) + ["zstd", "raw"])
    }

    /// Both rules at once: chunks sent raw for the backoff also count in the fast run, and a probe that falls in
    /// a backoff pause is not taken: probes at 10, 18, 26, 34 fail, and 42 falls in the 8-chunk pause after 34.
    @Test func backoffAndFastLinkTogether() {
        var policy = Self.started(.auto)
        let tried: Set = [0, 1, 2, 10, 18, 26, 34, 50]
        let expected = (0...50).map { tried.contains($0) ? "zstd" : "raw" }
        let chunks = Self.chunks(3, linkBound: false) + Self.chunks(48, linkBound: false, shrinks: false)
        #expect(Self.run(&policy, chunks) == expected)
    }
}
