import Dispatch
import FerrySession
import FerryTestSupport
import FerryWire
import Foundation
import Testing

@testable import FerryTransfer

/// The receive queue bound after acceptance (promise 4 of docs/SECURITY.md section 5): a sender that ignores its
/// window is cut off once more than 64 MiB of its chunk data waits to be written, over all its transfers together.
/// The receiver's I/O queue is held shut meanwhile (a stalled disk), so every chunk stored stays queued; the engine's
/// high-water mark of queued bytes, not the process's memory, shows that the bound held.
@Suite(.serialized, .timeLimit(.minutes(2))) struct QueueBoundTests {
    static let chunk = Limits.maxChunkSize  // 4 MiB

    @Test func aSenderThatIgnoresItsWindowIsCutOffPast64MiBQueuedOverAllItsTransfers() async throws {
        try await TemporaryDirectory.with(prefix: "engine-in") { inbox in
            try await TransferHostilePeerTests.withMallory(inbox: inbox.path, policy: .all) { mallory, bob, engine in
                // Two transfers of 48 MiB each: either alone stays under the bound, together they pass it.
                let size = 12 * Self.chunk
                let first = HostileSender(session: mallory, receiver: bob)
                let second = HostileSender(session: mallory, receiver: bob)
                try await first.send(.offer(first.offer([("flood-1.bin", UInt64(size))], chunkSize: Self.chunk)))
                #expect(try #require(await first.reply()).accepted)
                try await second.send(.offer(second.offer([("flood-2.bin", UInt64(size))], chunkSize: Self.chunk)))
                #expect(try #require(await second.reply()).accepted)

                // The disk stalls: nothing queued is written, so nothing is acknowledged and nothing leaves the queue.
                let gate = DispatchSemaphore(value: 0)
                await engine.io.submit { gate.wait() }
                defer { gate.signal() }

                let data = [UInt8](repeating: 0x5A, count: Self.chunk)
                var sent = 0
                for index in 0..<12 {  // 48 MiB of the first transfer, never waiting for an acknowledgement
                    try await first.sendChunk(file: 0, offset: UInt64(index * Self.chunk), raw: data)
                    sent += Self.chunk
                }
                for index in 0..<12 {  // then the second: the receiver cuts the link past 64 MiB
                    guard (try? await second.sendChunk(file: 0, offset: UInt64(index * Self.chunk), raw: data)) != nil
                    else { break }
                    sent += Self.chunk
                }
                #expect(sent > IncomingTransfers.maxQueuedBytes)
                #expect(await first.linkClosed(), "the link is cut")
                let largest = await engine.probe.largestQueuedBytes
                #expect(largest <= IncomingTransfers.maxQueuedBytes, "queued \(largest) bytes")
                // Control: the queue really filled up to the bound, so the stalled disk held every write.
                #expect(largest > IncomingTransfers.maxQueuedBytes - Self.chunk, "queued \(largest) bytes")
                #expect(await engine.receivesNothing, "both transfers ended with the link")
            }
            let visible = try FileManager.default.contentsOfDirectory(atPath: inbox.path).filter {
                $0 != ".ferry-staging"
            }
            #expect(visible.isEmpty, "\(visible)")
        }
    }
}
