import Dispatch
import FerrySession
import FerryTestSupport
import FerryWire
import Foundation
import Testing

@testable import FerryTransfer

/// A transfer that stops on the receiving side (its sender cancels, its link is lost, the engine stops) while the
/// disk is stalled: the engine's one I/O queue is held shut, as a stalled disk holds it. The stop never waits for
/// that queue in the engine's event loop (every peer's frames go through it), nor does `stop()` wait for it past a
/// bound; the transfer's outcome comes once the writes queued before the stop completed, and says what they put in
/// its staged files.
@Suite(.serialized, .timeLimit(.minutes(3))) struct InterruptedReceiveTests {
    static let chunk = Limits.minChunkSize

    /// The I/O queue held shut until `release` (or the end of the test).
    final class StalledDisk: Sendable {
        let gate = DispatchSemaphore(value: 0)
        init(_ engine: TransferEngine) async { await engine.io.submit { [gate] in gate.wait() } }
        func release() { gate.signal() }
    }

    /// The first `.finished` of transfer `id` on `events`.
    static func finished(_ id: TransferID, on events: AsyncStream<TransferEvent>) -> Task<TransferOutcome?, Never> {
        Task {
            for await event in events {
                if case .finished(let outcome) = event, outcome.transferID == id { return outcome }
            }
            return nil
        }
    }

    /// The receiver's reply to `sender`'s offer, or nil when none came within `seconds` (the loop is stuck).
    static func reply(to sender: HostileSender, within seconds: Int = 30) async -> OfferReply? {
        while true {
            switch await sender.nextEvent(timeout: .seconds(seconds)) {
            case .message(.offerReply(let reply)): return reply
            case .message: continue
            case .linkClosed, .streamEnded, .timedOut: return nil
            }
        }
    }

    @Test func aCancelWhileTheDiskStallsLeavesAnotherPeersOfferAnswered() async throws {
        let data = TestFiles.randomBytes(count: 2 * Self.chunk, seed: 41)
        try await SwarmMemberTests.withSessions(["bob", "mallory", "eve"], inbox: "stall-cancel") { sessions, inbox in
            let (bob, mallory, eve) = (sessions[0], sessions[1], sessions[2])
            let config = TransferConfiguration(receiveDirectory: inbox.path, offerPolicy: .all)
            try await TransferEngine.run(session: bob, configuration: config) { engine in
                let port = await bob.listenPort
                let toBob = try await mallory.connect(toAddress: .ipv4(.loopback, port: port), timeout: .seconds(30))
                let eveToBob = try await eve.connect(toAddress: .ipv4(.loopback, port: port), timeout: .seconds(30))
                let first = HostileSender(session: mallory, receiver: toBob.peerID)
                let finished = Self.finished(first.transferID, on: engine.events)
                defer { finished.cancel() }
                try await first.send(.offer(first.offer([("stalled.bin", UInt64(data.count))])))
                #expect(try #require(await Self.reply(to: first)).accepted)
                let disk = await StalledDisk(engine)
                defer { disk.release() }
                try await first.sendChunk(file: 0, offset: 0, raw: Array(data[..<Self.chunk]))
                try await first.send(
                    .cancel(TransferCancel(transferID: first.transferID, reason: .cancelledByUser, detail: "")))

                // Mallory's next offer is answered, so its cancel was handled (one peer's frames are handled in
                // order); then eve's, the disk still stalled: both answered all the same.
                let next = HostileSender(session: mallory, receiver: toBob.peerID)
                try await next.send(.offer(next.offer([("next.bin", 10)])))
                #expect(await Self.reply(to: next)?.accepted == true, "mallory's next offer was not answered")
                let second = HostileSender(session: eve, receiver: eveToBob.peerID)
                try await second.send(.offer(second.offer([("other.bin", 10)])))
                let answer = await Self.reply(to: second)
                #expect(answer?.accepted == true, "eve's offer was not answered while the disk stalled")

                disk.release()
                let outcome = try #require(await finished.value)
                #expect(outcome.stop == .cancelledByPeer(.cancelledByUser), "\(outcome)")
                // The outcome waits at most 5 s for the stalled write; on a loaded machine the answers above can
                // take longer, and keptBytes is then the documented lower bound (0). Its exact figure once the
                // writes complete is the next test's promise.
                #expect(outcome.keptBytes == UInt64(Self.chunk) || outcome.keptBytes == 0, "\(outcome)")
            }
        }
    }

    @Test func keptBytesIsWhatTheStagedFileHoldsOnceTheQueuedWritesComplete() async throws {
        let data = TestFiles.randomBytes(count: 4 * Self.chunk, seed: 42)
        try await TemporaryDirectory.with(prefix: "stall-kept") { inbox in
            try await TransferHostilePeerTests.withMallory(inbox: inbox.path, policy: .all) { mallory, bob, engine in
                let first = HostileSender(session: mallory, receiver: bob)
                let finished = Self.finished(first.transferID, on: engine.events)
                defer { finished.cancel() }
                try await first.send(.offer(first.offer([("kept.bin", UInt64(data.count))])))
                #expect(try #require(await Self.reply(to: first)).accepted)
                let disk = await StalledDisk(engine)
                defer { disk.release() }
                for index in 0..<2 {
                    let start = index * Self.chunk
                    try await first.sendChunk(
                        file: 0, offset: UInt64(start), raw: Array(data[start..<start + Self.chunk]))
                }
                try await first.send(
                    .cancel(TransferCancel(transferID: first.transferID, reason: .shuttingDown, detail: "")))
                // A second offer from the same sender, answered: its frames are handled in order, so the cancel was
                // handled before it, with both chunks still waiting to be written.
                let next = HostileSender(session: mallory, receiver: bob)
                try await next.send(.offer(next.offer([("next.bin", 10)])))
                #expect(await Self.reply(to: next)?.accepted == true, "the next offer was not answered")

                disk.release()
                let outcome = try #require(await finished.value)
                #expect(outcome.stop == .cancelledByPeer(.shuttingDown), "\(outcome)")
                #expect(outcome.keptBytes == UInt64(2 * Self.chunk), "\(outcome)")
                let staging = inbox.path + "/.ferry-staging"
                let sizes = try FileManager.default.contentsOfDirectory(atPath: staging).compactMap {
                    try FileManager.default.attributesOfItem(atPath: staging + "/" + $0)[.size] as? Int
                }
                #expect(sizes.contains(Int(outcome.keptBytes)), "staged sizes \(sizes)")
            }
        }
    }

    @Test func stopReturnsWhileTheDiskStallsAndReportsWhatWasWritten() async throws {
        let data = TestFiles.randomBytes(count: 4 * Self.chunk, seed: 43)
        try await TemporaryDirectory.with(prefix: "stall-stop") { inbox in
            try await TransferHostilePeerTests.withMallory(inbox: inbox.path, policy: .all) { mallory, bob, engine in
                let first = HostileSender(session: mallory, receiver: bob)
                let finished = Self.finished(first.transferID, on: engine.events)
                defer { finished.cancel() }
                try await first.send(.offer(first.offer([("stop.bin", UInt64(data.count))])))
                #expect(try #require(await Self.reply(to: first)).accepted)
                let disk = await StalledDisk(engine)
                defer { disk.release() }
                try await first.sendChunk(file: 0, offset: 0, raw: Array(data[..<Self.chunk]))

                let (results, result) = AsyncStream.makeStream(of: Bool.self)
                let stopping = Task {
                    await engine.stop(reason: .shuttingDown)
                    result.yield(true)
                }
                let deadline = Task {
                    try? await Task.sleep(for: .seconds(60))
                    result.yield(false)
                }
                var returned = false
                for await value in results {
                    returned = value
                    break
                }
                deadline.cancel()
                #expect(returned, "stop() did not return while the disk stalled")
                disk.release()
                let outcome = try #require(await finished.value)
                #expect(outcome.stop == .cancelledHere(.shuttingDown), "\(outcome)")
                #expect(outcome.keptBytes <= UInt64(Self.chunk), "a lower bound: \(outcome)")
                await stopping.value
            }
        }
    }
}

/// The receive directory is gone (removed, moved, unmounted): the engine stops keeping nothing staged, and says so.
@Suite(.serialized, .timeLimit(.minutes(2))) struct InterruptedByDirectoryGoneTests {
    @Test func aStopForAGoneDirectoryEndsEveryUnfinishedFileWithItsResultAndKeepsNothing() async throws {
        let chunk = Limits.minChunkSize
        let data = TestFiles.randomBytes(count: 2 * chunk, seed: 44)
        try await TemporaryDirectory.with(prefix: "gone-stop") { inbox in
            try await TransferHostilePeerTests.withMallory(inbox: inbox.path, policy: .all) { mallory, bob, engine in
                let sender = HostileSender(session: mallory, receiver: bob)
                let finished = InterruptedReceiveTests.finished(sender.transferID, on: engine.events)
                defer { finished.cancel() }
                let files = [("a.bin", UInt64(data.count)), ("b.bin", UInt64(10))]
                try await sender.send(.offer(sender.offer(files)))
                #expect(try #require(await sender.reply()).accepted)
                try await sender.sendChunk(file: 0, offset: 0, raw: Array(data[..<chunk]))
                #expect(try #require(await sender.ack()).status == .stored)

                let stopping = Task {
                    await engine.stopDiscardingStaged(
                        reason: .shuttingDown, detail: "the receive directory was removed")
                }
                var results: [FileResult] = []
                let cancel = await sender.waitFor { message -> TransferCancel? in
                    switch message {
                    case .fileResult(let result): results.append(result)
                    case .cancel(let cancel): return cancel
                    default: break
                    }
                    return nil
                }
                await stopping.value
                #expect(cancel?.reason == .shuttingDown, "\(String(describing: cancel))")
                #expect(cancel?.detail == "the receive directory was removed", "\(String(describing: cancel))")
                #expect(results.map(\.fileIndex).sorted() == [0, 1], "\(results)")
                #expect(results.allSatisfy { $0.status == .writeFailed }, "\(results)")
                let outcome = try #require(await finished.value)
                #expect(outcome.keptBytes == 0, "\(outcome)")
                #expect(outcome.failure == "the receive directory was removed", "\(outcome)")
            }
        }
    }
}
