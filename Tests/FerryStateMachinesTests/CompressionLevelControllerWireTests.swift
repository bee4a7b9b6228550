import Testing

@testable import FerryStateMachines

/// The link's time for an epoch's chunks from their wire bytes, and the settling after a move: what a tar of
/// /usr/include over a 100 Mbit/s link needs where its data turns 100-200 times compressible for 44 MiB and back.
@Suite struct CompressionLevelControllerWireTests {
    typealias Pace = CompressionLevelController.Pace
    static let ladder = CompressionLevelControllerTests.ladder

    /// A chunk of 1 MiB (times in ms), `wire` bytes on the wire, `inFlight` raw bytes in the window after it.
    static func pace(_ ms: Double, waited: Double, compress: Double, wire: Int, inFlight: Int = 0) -> Pace {
        Pace(
            rawBytes: 1 << 20, seconds: ms / 1000, waitedSeconds: waited / 1000, compressSeconds: compress / 1000,
            inFlightBytes: inFlight, wireBytes: wire)
    }

    /// Text that compresses 4 times, balanced against a 13 MB/s link at level 3 (waiting 10%: it stays), then a run
    /// of near-identical headers: the pump waits 90% of its cycle for the acknowledgements of the text before,
    /// while its own chunks carry 2 KiB each (0.16 ms of the link). Predicted from the cycle (20 ms) there is room
    /// for level 5 (8 times level 1's cost); from the chunks' wire bytes there is none, and the next step (4, twice
    /// level 3's cost) is costly and predicted past the link: it stays at 3. The same wait with the chunks carrying
    /// the link's rate (a quarter MiB each) climbs to 5, as before.
    @Test func aWaitForTheChunksBeforeIsNoRoomToClimb() {
        func run(wire: Int) -> [Int] {
            var controller = CompressionLevelController(ladder: Self.ladder, startStep: 3, warmUpChunks: 0)
            var epochs = 0
            return CompressionLevelControllerTests.run(&controller, epochs: 2) { _ in
                epochs += 1
                return epochs == 1
                    ? Self.pace(20, waited: 2, compress: 15, wire: 1 << 18)
                    : Self.pace(20, waited: 18, compress: 1, wire: wire)
            }
        }
        #expect(run(wire: 2048) == [3, 3])
        #expect(run(wire: 1 << 18) == [3, 5])
    }

    /// Climbed to level 4 over a 13 MB/s link (level 1 waiting for it with room to spare), then a run of
    /// near-identical headers where the pump is the bottleneck (8 ms a chunk, 7 of them compressing, 1 KiB on the
    /// wire). The link's time for such chunks is next to nothing, so the step down goes to the cheapest level (1),
    /// not raw (a raw chunk puts its 1 MiB on the wire, 80 ms). Predicted with the link's time as measured at level 1
    /// (20 ms a chunk), no step below looked faster and level 4 stayed: level 8 ran through that run at 125 MB/s
    /// where level 3 takes 300.
    @Test func cpuBoundOnRedundantDataStepsDownToTheCheapestLevel() {
        var controller = CompressionLevelController(ladder: Self.ladder, warmUpChunks: 0)
        let levels = CompressionLevelControllerTests.run(&controller, epochs: 2) { level in
            level == 1
                ? Self.pace(20, waited: 16, compress: 2, wire: 1 << 18)
                : Self.pace(8, waited: 0, compress: 7, wire: 1024)
        }
        #expect(levels == [4, 1])
    }

    /// After a move only the chunks still in flight are not counted (here 2 MiB: 2 chunks and the one compressed
    /// again), not `settleChunks` (8); with the window's fill unknown, all 8 (`theWarmUpIsIgnored`).
    @Test func theSettlingIsTheChunksInFlight() {
        var controller = CompressionLevelController(ladder: Self.ladder)
        let cpuBound = Self.pace(4, waited: 0, compress: 3, wire: 0, inFlight: 2 << 20)
        for _ in 0..<(CompressionLevelController.warmUpChunks + CompressionLevelController.epochChunks) {
            controller.record(cpuBound)
        }
        #expect(controller.level == 0)
        let linkBound = Self.pace(7, waited: 3.5, compress: 0, wire: 0, inFlight: 2 << 20)
        for _ in 0..<(3 + CompressionLevelController.epochChunks - 1) { controller.record(linkBound) }
        #expect(controller.level == 0)
        controller.record(linkBound)
        #expect(controller.level == 1)
    }
}
