@testable import FerrySystem
import Glibc
import Testing

@Suite("TCP")
struct TCPTests {
    @Test func echoesMebibytesBothWays() async throws {
        try await withReactor { reactor in
            let listener = try loopbackListener(reactor)
            let server = Task {
                let connection = try await listener.accept()
                defer { connection.close() }
                var echoed = 0
                while true {
                    let bytes = try await connection.read(maxBytes: 65536)
                    if bytes.isEmpty { break }
                    try await connection.write(bytes)
                    echoed += bytes.count
                }
                connection.shutdownWrite()
                return echoed
            }
            let client = try await reactor.connectTCP(to: listener.localAddress, timeout: .seconds(30))
            defer { client.close() }
            #expect(client.remoteAddress == listener.localAddress)
            #expect(client.localAddress.hostDescription == "127.0.0.1")
            let payload = patternBytes(count: 4 << 20 + 12345, seed: 1)
            let writer = Task {
                var offset = 0
                var size = 1
                while offset < payload.count {  // chunks from 1 byte to 1 MiB
                    let end = min(payload.count, offset + size)
                    try await client.write(Array(payload[offset..<end]))
                    offset = end
                    size = size >= 1 << 20 ? 1 : size * 3
                }
                client.shutdownWrite()
            }
            let received = try await readToEnd(client)
            try await writer.value
            #expect(try await server.value == payload.count)
            #expect(received.count == payload.count)
            #expect(received == payload)
            #expect(client.queuedWriteBytes == 0)
        }
    }

    @Test func concurrentWritersNeverInterleave() async throws {
        try await withReactor { reactor in
            let (client, server) = try await connectedPair(reactor)
            defer {
                client.close()
                server.close()
            }
            let writers = 8
            let blocksPerWriter = 6
            let blockSize = 200_000
            let reader = Task { try await readToEnd(server) }
            try await withThrowingTaskGroup(of: Void.self) { group in
                for writer in 0..<writers {
                    group.addTask {
                        for _ in 0..<blocksPerWriter {
                            try await client.write([UInt8](repeating: UInt8(writer + 1), count: blockSize))
                        }
                    }
                }
                try await group.waitForAll()
            }
            #expect(client.queuedWriteBytes == 0)
            client.shutdownWrite()
            let received = try await reader.value
            #expect(received.count == writers * blocksPerWriter * blockSize)
            var counts = [Int](repeating: 0, count: writers + 1)
            for start in stride(from: 0, to: received.count, by: blockSize) {
                let block = received[start..<min(received.count, start + blockSize)]
                let first = try #require(block.first)
                #expect(block.allSatisfy { $0 == first }, "block at \(start) mixes writers")
                counts[Int(first)] += 1
            }
            #expect(counts.dropFirst().allSatisfy { $0 == blocksPerWriter })
        }
    }

    @Test func readAfterPeerCloseReturnsEndOfStream() async throws {
        try await withReactor { reactor in
            let (client, server) = try await connectedPair(reactor)
            defer { client.close() }
            try await server.write([1, 2, 3])
            server.close()
            #expect(try await readToEnd(client) == [1, 2, 3])
            #expect(try await client.read(maxBytes: 10) == [])
        }
    }

    @Test func writeAfterPeerCloseThrowsWithoutSIGPIPE() async throws {
        try await withReactor { reactor in
            let (client, server) = try await connectedPair(reactor)
            defer { client.close() }
            server.close()
            let chunk = [UInt8](repeating: 7, count: 65536)
            var failure: SystemError?
            for _ in 0..<10_000 {
                do {
                    try await client.write(chunk)
                } catch let error as SystemError {
                    failure = error
                    break
                }
            }
            let error = try #require(failure)
            #expect(error.call == "send()")
            #expect(error.errno == .brokenPipe || error.errno == .connectionReset)
            // Still alive: SIGPIPE was not delivered (ignored, and MSG_NOSIGNAL).
        }
    }

    @Test func connectToClosedPortIsRefused() async throws {
        try await withReactor { reactor in
            // A bound socket that does not listen keeps the port reserved, and refuses connections.
            let reserved = try FileDescriptor.socket(family: AF_INET, type: Int32(SOCK_STREAM.rawValue))
            defer { reserved.close() }
            try reserved.bind(to: .ipv4(.loopback, port: 0))
            let address = try reserved.localAddress()
            await #expect {
                _ = try await reactor.connectTCP(to: address, timeout: .seconds(30))
            } throws: { error in
                (error as? SystemError)?.errno == .connectionRefused && (error as? SystemError)?.call == "connect()"
            }
            #expect(reactor.openDescriptorCount == 0)
        }
    }

    @Test func listenOnBusyPortNamesTheCall() async throws {
        try await withReactor { reactor in
            let listener = try loopbackListener(reactor)
            defer { listener.close() }
            #expect {
                _ = try reactor.listenTCP(on: listener.localAddress, reuseAddress: false)
            } throws: { error in
                (error as? SystemError)?.description == "bind(): Address already in use"
            }
            #expect(reactor.openDescriptorCount == 1)
        }
    }

    @Test func closeFailsPendingRead() async throws {
        try await withReactor { reactor in
            let (client, server) = try await connectedPair(reactor)
            defer { server.close() }
            let read = Task { try await client.read(maxBytes: 100) }
            try await waitUntil(reactor, "read suspended") { client.registration.suspendedWaiterCount == 1 }
            client.close()
            await #expect(throws: ReactorError.closed) { try await read.value }
            await #expect(throws: ReactorError.closed) { try await client.read(maxBytes: 1) }
            await #expect(throws: ReactorError.closed) { try await client.write([1]) }
            client.close()  // idempotent
        }
    }

    @Test func cancellingPendingReadThrowsCancellationError() async throws {
        try await withReactor { reactor in
            let (client, server) = try await connectedPair(reactor)
            defer {
                client.close()
                server.close()
            }
            let read = Task { try await client.read(maxBytes: 100) }
            try await waitUntil(reactor, "read suspended") { client.registration.suspendedWaiterCount == 1 }
            read.cancel()
            await #expect(throws: CancellationError.self) { try await read.value }
            // The connection is still usable after a cancelled read.
            try await server.write([42])
            #expect(try await client.read(maxBytes: 100) == [42])
        }
    }

    @Test func cancellingPendingAcceptThrowsCancellationError() async throws {
        try await withReactor { reactor in
            let listener = try loopbackListener(reactor)
            defer { listener.close() }
            let accept = Task { try await listener.accept() }
            try await waitUntil(reactor, "accept suspended") { listener.registration.suspendedWaiterCount == 1 }
            accept.cancel()
            await #expect(throws: CancellationError.self) { try await accept.value }
        }
    }

    @Test func closingListenerFailsPendingAccept() async throws {
        try await withReactor { reactor in
            let listener = try loopbackListener(reactor)
            let accept = Task { try await listener.accept() }
            try await waitUntil(reactor, "accept suspended") { listener.registration.suspendedWaiterCount == 1 }
            listener.close()
            await #expect(throws: ReactorError.closed) { try await accept.value }
            #expect(reactor.openDescriptorCount == 0)
        }
    }
}

@Suite("TCP backpressure")
struct TCPBackpressureTests {
    /// Far more than loopback socket buffers hold, so a write must suspend until the peer reads.
    static let bigWrite = [UInt8](repeating: 1, count: 32 << 20)

    @Test func queuedWriterCanBeCancelledAndShutdownWaitsForQueuedBytes() async throws {
        try await withReactor { reactor in
            let (client, server) = try await connectedPair(reactor)
            defer {
                client.close()
                server.close()
            }
            let first = Task { try await client.write(Self.bigWrite) }
            try await waitUntil(reactor, "first write blocked") { client.registration.suspendedWaiterCount == 1 }
            #expect(client.queuedWriteBytes > 0 && client.queuedWriteBytes < Self.bigWrite.count)
            let second = Task { try await client.write([2, 2, 2]) }
            try await waitUntil(reactor, "second write queued") { client.waitingWriterCount == 1 }
            second.cancel()
            await #expect(throws: CancellationError.self) { try await second.value }
            client.shutdownWrite()  // after the first write, which is still in progress
            await #expect(throws: SystemError.self) { try await client.write([3]) }
            let received = try await readToEnd(server, chunk: 1 << 20)
            try await first.value
            #expect(received.count == Self.bigWrite.count)
            #expect(received.allSatisfy { $0 == 1 })
            #expect(client.queuedWriteBytes == 0)
        }
    }

    @Test func cancellingAPartlySentWriteClosesTheConnection() async throws {
        try await withReactor { reactor in
            let (client, server) = try await connectedPair(reactor)
            defer { server.close() }
            let writer = Task { try await client.write(Self.bigWrite) }
            try await waitUntil(reactor, "write blocked") { client.registration.suspendedWaiterCount == 1 }
            writer.cancel()
            await #expect(throws: CancellationError.self) { try await writer.value }
            await #expect(throws: ReactorError.closed) { try await client.read(maxBytes: 1) }
            let received = try await readToEnd(server, chunk: 1 << 20)
            #expect(received.count < Self.bigWrite.count)
        }
    }
}
