import Synchronization
import Testing

@testable import FerryTransfer

/// The receive path's I/O queue keeps the order work was given in, gathered or not (`GatheringIO`): a verification
/// turn never runs before the write queued ahead of it.
@Suite struct GatheringIOTests {
    final class Log: Sendable {
        let entries = Mutex<[String]>([])
        func add(_ entry: String) { entries.withLock { $0.append(entry) } }
        var all: [String] { entries.withLock { $0 } }
    }

    @Test func workGatheredBeforeOtherWorkRunsBeforeIt() async {
        let io = GatheringIO(label: "test.gathering")
        let log = Log()
        io.gather(bytes: 10) { log.add("write 1") }
        io.gather(bytes: 10) { log.add("write 2") }
        io.submit { log.add("turn") }
        io.gather(bytes: 10) { log.add("write 3") }
        let seen = await io.run { log.all }
        #expect(seen == ["write 1", "write 2", "turn", "write 3"])
        #expect(io.jobs == 4, "the two gathered writes went as one job")
        #expect(!io.isHolding)
    }

    @Test func runWaitsForWorkGatheredBeforeIt() async {
        let io = GatheringIO(label: "test.gathering")
        let log = Log()
        io.gather(bytes: 1) { log.add("write") }
        #expect(io.isHolding)
        let seen = await io.run { log.all }
        #expect(seen == ["write"])
    }

    @Test func gatheringGoesToTheQueueAtItsBounds() async {
        let io = GatheringIO(label: "test.gathering")
        let log = Log()
        for index in 0..<GatheringIO.maximumItems { io.gather(bytes: 0) { log.add("\(index)") } }
        #expect(io.jobs == 1 && !io.isHolding, "\(io.jobs) jobs at \(GatheringIO.maximumItems) items")
        io.gather(bytes: 100) { log.add("small") }
        #expect(io.isHolding)
        io.gather(bytes: GatheringIO.maximumBytes) { log.add("large") }
        #expect(io.jobs == 2 && !io.isHolding, "a large write goes at once, with what waited before it")
        let seen = await io.run { log.all }
        #expect(seen == (0..<GatheringIO.maximumItems).map { "\($0)" } + ["small", "large"])
    }
}
