@testable import FerrySystem
import Testing

/// `TCPConnection.unacknowledgedBytes`: where the bytes in flight are, which tells the compression level controller
/// a wait for the link from a wait for the receiving process.
@Suite("TCP unacknowledged bytes", .timeLimit(.minutes(1)))
struct TCPQueueTests {
    /// Bytes the peer's process read and answered have all been acknowledged: the answer's segment acknowledges
    /// everything received before it.
    @Test func nothingIsUnacknowledgedOnceThePeerAnswered() async throws {
        try await withReactor { reactor in
            let (client, server) = try await connectedPair(reactor)
            defer {
                client.close()
                server.close()
            }
            let count = 1 << 20
            try await client.write(patternBytes(count: count, seed: 2))
            var read = 0
            while read < count { read += try await server.read(maxBytes: count).count }
            try await server.write([1])
            #expect(try await client.read(maxBytes: 1) == [1])
            #expect(client.unacknowledgedBytes == 0)
            client.close()
            #expect(client.unacknowledgedBytes == nil)
        }
    }

    /// A peer that does not read: the bytes the kernel accepted and the peer's TCP has not acknowledged (in our
    /// send buffer once the peer's receive buffer is full) are counted; those still queued for `send` are not.
    @Test func bytesInTheKernelNotYetAcknowledgedAreCounted() async throws {
        try await withReactor { reactor in
            let (client, server) = try await connectedPair(reactor)
            defer {
                client.close()
                server.close()
            }
            // More than any receive and send buffer hold together: the write never completes.
            let writer = Task { try await client.write(patternBytes(count: 64 << 20, seed: 3)) }
            // Waits for the condition itself (the suite's time limit fails it if it never holds).
            while (client.unacknowledgedBytes ?? 0) == 0 {
                try Task.checkCancellation()
                await Task.yield()
            }
            let unacknowledged = try #require(client.unacknowledgedBytes)
            #expect(unacknowledged > 0 && unacknowledged < 64 << 20)
            writer.cancel()
            _ = await writer.result
        }
    }

    /// A peer that does not read: once its receive buffer is full, its window closes and the time our sending is
    /// held back by it grows (`tcpi_rwnd_limited`).
    @Test func aPeerThatDoesNotReadHoldsTheSenderBack() async throws {
        try await withReactor { reactor in
            let (client, server) = try await connectedPair(reactor)
            defer {
                client.close()
                server.close()
            }
            let before = try #require(client.receiveWindowLimitedSeconds)
            let writer = Task { try await client.write(patternBytes(count: 64 << 20, seed: 4)) }
            // Waits for the condition itself (the suite's time limit fails it if it never holds).
            while (client.receiveWindowLimitedSeconds ?? 0) <= before {
                try Task.checkCancellation()
                await Task.yield()
            }
            #expect((client.receiveWindowLimitedSeconds ?? 0) > before)
            writer.cancel()
            _ = await writer.result
        }
    }
}
