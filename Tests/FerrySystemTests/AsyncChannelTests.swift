import Foundation
import Synchronization
import Testing

@testable import FerrySystem

/// AsyncChannel: AsyncStream's unbounded semantics for one consumer (order, finish, cancellation), specialized.
@Suite(.timeLimit(.minutes(1))) struct AsyncChannelTests {
    @Test func elementsArriveInOrderAndFinishEndsAfterTheBuffered() async {
        let channel = AsyncChannel<Int>()
        for value in 0..<3000 { channel.yield(value) }  // past the compaction threshold while nothing is read
        var seen: [Int] = []
        for await value in channel {
            seen.append(value)
            if value == 1999 { channel.finish() }
            if value == 2500 { channel.yield(-1) }  // after finish: dropped
        }
        #expect(seen == Array(0..<3000))
        channel.yield(7)
        var iterator = channel.makeAsyncIterator()
        #expect(await iterator.next() == nil)  // stays ended
    }

    /// `takeBuffered` gives what is buffered, in order, without waiting, also after one was taken and after finish;
    /// the channel goes on with what comes later.
    @Test func takeBufferedGivesWhatGatheredInOrder() async {
        let channel = AsyncChannel<Int>()
        #expect(channel.takeBuffered().isEmpty)
        for value in 0..<1500 { channel.yield(value) }
        #expect(channel.bufferedCount == 1500)
        var iterator = channel.makeAsyncIterator()
        #expect(await iterator.next() == 0)
        #expect(channel.bufferedCount == 1499)
        #expect(channel.takeBuffered() == Array(1..<1500))
        #expect(channel.bufferedCount == 0 && channel.takeBuffered().isEmpty)
        channel.yield(7)
        channel.yield(8)
        channel.finish()
        #expect(channel.takeBuffered() == [7, 8])
        #expect(await iterator.next() == nil)
    }

    /// `onTake` sees every element once, as the consumer takes it (a waiting consumer handed one directly, `next` from
    /// the buffer, `takeBuffered`), never one that is only buffered or dropped after `finish`.
    @Test func onTakeSeesEachElementAsTheConsumerTakesIt() async {
        let taken = Mutex<[Int]>([])
        let channel = AsyncChannel<Int> { value in taken.withLock { $0.append(value) } }
        for value in 0..<5 { channel.yield(value) }
        #expect(taken.withLock { $0 }.isEmpty)
        var iterator = channel.makeAsyncIterator()
        #expect(await iterator.next() == 0)
        #expect(taken.withLock { $0 } == [0])
        #expect(channel.takeBuffered() == [1, 2, 3, 4])
        #expect(taken.withLock { $0 } == [0, 1, 2, 3, 4])
        let waiting = Task { await channel.next(isolation: nil) }
        while channel.state.withLock({ $0.waiter == nil }) { await Task.yield() }
        channel.yield(5)
        #expect(await waiting.value == 5)
        channel.finish()
        channel.yield(6)
        #expect(await iterator.next() == nil)
        #expect(taken.withLock { $0 } == [0, 1, 2, 3, 4, 5])
    }

    @Test func aWaitingConsumerGetsWhatIsYieldedThenNilOnFinish() async {
        let channel = AsyncChannel<String>()
        let consumer = Task {
            var seen: [String] = []
            for await text in channel { seen.append(text) }
            return seen
        }
        channel.yield("a")
        channel.yield("b")
        channel.finish()
        channel.finish()  // idempotent
        #expect(await consumer.value == ["a", "b"])
    }

    /// Four producers on their own threads: every element arrives once, each producer's in its order.
    @Test func manyProducersOneConsumer() async {
        let channel = AsyncChannel<(producer: Int, value: Int)>()
        let done = Mutex(0)
        for producer in 0..<4 {
            Thread.detachNewThread {
                for value in 0..<5000 { channel.yield((producer, value)) }
                if done.withLock({ count in
                    count += 1
                    return count == 4
                }) {
                    channel.finish()
                }
            }
        }
        var next = [0, 0, 0, 0]
        var inOrder = true
        for await (producer, value) in channel {
            if value != next[producer] { inOrder = false }
            next[producer] = value + 1
        }
        #expect(inOrder)
        #expect(next == [5000, 5000, 5000, 5000])
    }

    /// Cancelling the consuming task ends a wait with nil, as for AsyncStream; later elements are dropped.
    @Test func cancellingTheConsumerEndsItsWait() async {
        let channel = AsyncChannel<Int>()
        let started = AsyncChannel<Void>()
        let consumer = Task {
            var count = 0
            started.yield(())
            for await _ in channel { count += 1 }
            return count
        }
        var signals = started.makeAsyncIterator()
        _ = await signals.next()
        consumer.cancel()
        #expect(await consumer.value == 0)
        channel.yield(1)
        var iterator = channel.makeAsyncIterator()
        #expect(await iterator.next() == nil)
    }

    /// A consumer on an actor: elements are handled there, in order.
    @Test func aConsumerOnAnActor() async {
        actor Sum {
            var total = 0
            func run(_ channel: AsyncChannel<Int>) async -> Int {
                for await value in channel { total += value }
                return total
            }
        }
        let channel = AsyncChannel<Int>()
        let sum = Sum()
        let consumer = Task { await sum.run(channel) }
        for value in 1...100 { channel.yield(value) }
        channel.finish()
        #expect(await consumer.value == 5050)
    }
}
