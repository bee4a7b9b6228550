import FerryTestSupport
import Glibc
import Testing

extension IntegrationTests {
    /// The test plays both ends: a client connected to the proxy and the server the proxy connects to.
    /// Every socket has a 10 s receive timeout, so a broken proxy fails the test instead of hanging it.
    @Suite("FaultProxy")
    struct FaultProxyTests {
        @Test func passesBytesBothWays() throws {
            let server = try LoopbackSocket.listen()
            defer { server.close() }
            let proxy = try FaultProxy(targetPort: server.port)
            defer { proxy.close() }
            let (client, accepted) = try connectPair(through: proxy, server: server)
            defer { client.close(); accepted.close() }
            for round in 0..<12 {
                let chunk = pattern(16_384, seed: round)
                try client.write(chunk)
                #expect(try accepted.read(exactly: chunk.count) == chunk)
                try accepted.write(chunk.reversed())
                #expect(try client.read(exactly: chunk.count) == chunk.reversed())
            }
            #expect(proxy.acceptedConnections == 1)
        }

        @Test func truncateClosesBothSidesAfterTheLimit() throws {
            let server = try LoopbackSocket.listen()
            defer { server.close() }
            let proxy = try FaultProxy(
                targetPort: server.port, mode: .truncate(afterBytes: 100, direction: .clientToServer))
            defer { proxy.close() }
            let (client, accepted) = try connectPair(through: proxy, server: server)
            defer { client.close(); accepted.close() }
            let sent = pattern(1_000, seed: 1)
            try client.write(sent)
            #expect(try accepted.readToEnd() == Array(sent.prefix(100)))
            #expect(try client.readToEnd().isEmpty)
        }

        @Test func truncateServerToClient() throws {
            let server = try LoopbackSocket.listen()
            defer { server.close() }
            let proxy = try FaultProxy(
                targetPort: server.port, mode: .truncate(afterBytes: 10, direction: .serverToClient))
            defer { proxy.close() }
            let (client, accepted) = try connectPair(through: proxy, server: server)
            defer { client.close(); accepted.close() }
            try client.write(Array("request".utf8))
            #expect(try accepted.read(exactly: 7) == Array("request".utf8))
            try accepted.write(pattern(50, seed: 2))
            #expect(try client.readToEnd() == Array(pattern(50, seed: 2).prefix(10)))
        }

        @Test func flipBitsCorruptsEveryNthByteOfOneDirection() throws {
            let server = try LoopbackSocket.listen()
            defer { server.close() }
            let proxy = try FaultProxy(targetPort: server.port, mode: .flipBits(every: 7))
            defer { proxy.close() }
            let (client, accepted) = try connectPair(through: proxy, server: server)
            defer { client.close(); accepted.close() }
            let sent = pattern(1_000, seed: 3)
            for start in stride(from: 0, to: sent.count, by: 333) {  // offsets count across writes
                try client.write(Array(sent[start..<min(start + 333, sent.count)]))
            }
            let received = try accepted.read(exactly: sent.count)
            let flipped = (0..<sent.count).filter { received[$0] != sent[$0] }
            #expect(flipped == Array(stride(from: 6, to: sent.count, by: 7)))
            #expect(flipped.allSatisfy { received[$0] ^ sent[$0] == 0x01 })
            try accepted.write(sent)
            #expect(try client.read(exactly: sent.count) == sent)  // the other direction is untouched
        }

        @Test func stallHoldsBytesUntilModeChanges() throws {
            let server = try LoopbackSocket.listen()
            defer { server.close() }
            let proxy = try FaultProxy(targetPort: server.port)
            defer { proxy.close() }
            let (client, accepted) = try connectPair(through: proxy, server: server)
            defer { client.close(); accepted.close() }
            proxy.mode = .stall
            try client.write(Array("held".utf8))
            #expect(!accepted.isReadable(withinMilliseconds: 300))
            proxy.mode = .delay(.milliseconds(20))
            #expect(try accepted.read(exactly: 4) == Array("held".utf8))
            proxy.mode = .pass
            try accepted.write(Array("done".utf8))
            #expect(try client.read(exactly: 4) == Array("done".utf8))
        }

        @Test func delayOneWayHoldsOnlyItsDirection() throws {
            let server = try LoopbackSocket.listen()
            defer { server.close() }
            let proxy = try FaultProxy(targetPort: server.port)
            defer { proxy.close() }  // ends the delay still under way
            let (client, accepted) = try connectPair(through: proxy, server: server)
            defer { client.close(); accepted.close() }
            proxy.mode = .delayOneWay(.seconds(60), direction: .serverToClient)
            try accepted.write(Array("slow".utf8))
            try client.write(Array("fast".utf8))
            #expect(try accepted.read(exactly: 4) == Array("fast".utf8))  // the other direction passes
            #expect(!client.isReadable(withinMilliseconds: 300))
        }

        @Test func blackHoleNeverAnswersNorConnects() throws {
            let server = try LoopbackSocket.listen()
            defer { server.close() }
            let proxy = try FaultProxy(targetPort: server.port, mode: .blackHole)
            defer { proxy.close() }
            let client = try LoopbackSocket.connect(port: proxy.port)
            defer { client.close() }
            try client.write(pattern(4_096, seed: 4))
            #expect(!client.isReadable(withinMilliseconds: 300))
            #expect(!server.isReadable(withinMilliseconds: 0))  // no pending connection at the target
        }

        @Test func closeEndsConnectionsAndListening() throws {
            let server = try LoopbackSocket.listen()
            defer { server.close() }
            let proxy = try FaultProxy(targetPort: server.port)
            let (client, accepted) = try connectPair(through: proxy, server: server)
            defer { client.close(); accepted.close() }
            proxy.close()
            #expect(try client.readToEnd().isEmpty)
            #expect(try accepted.readToEnd().isEmpty)
            #expect(throws: LoopbackSocket.Failure.self) { try LoopbackSocket.connect(port: proxy.port).close() }
            proxy.close()
        }

        private func connectPair(through proxy: FaultProxy, server: LoopbackSocket) throws -> (
            client: LoopbackSocket, accepted: LoopbackSocket
        ) {
            let client = try LoopbackSocket.connect(port: proxy.port)
            do {
                return (client, try server.accept())
            } catch {
                client.close()
                throw error
            }
        }

        private func pattern(_ count: Int, seed: Int) -> [UInt8] {
            (0..<count).map { UInt8(truncatingIfNeeded: $0 &* 31 &+ seed &* 7 &+ ($0 >> 8)) }
        }
    }
}
