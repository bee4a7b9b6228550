@testable import FerrySystem
import Testing

/// Connect timeout and cancellation, on loopback only: a listener with backlog 0 that never accepts has a full
/// accept queue after one connection, and Linux then drops further SYNs, so the next connect stays pending.
@Suite("Connect")
struct ConnectTests {
    /// Fills the accept queue of a never-accepting listener; returns the connections that got in.
    private func fillAcceptQueue(_ reactor: Reactor, _ listener: TCPListener) async throws -> [TCPConnection] {
        var connections: [TCPConnection] = []
        for _ in 0..<8 {
            do {
                connections.append(try await reactor.connectTCP(to: listener.localAddress, timeout: .seconds(2)))
            } catch ReactorError.timedOut {
                return connections
            }
        }
        Issue.record("the accept queue never filled up")
        return connections
    }

    @Test func connectTimesOutWhenTheAcceptQueueIsFull() async throws {
        try await withReactor { reactor in
            let listener = try loopbackListener(reactor, backlog: 0)
            defer { listener.close() }
            let queued = try await fillAcceptQueue(reactor, listener)
            defer { queued.forEach { $0.close() } }
            await #expect(throws: ReactorError.timedOut) {
                _ = try await reactor.connectTCP(to: listener.localAddress, timeout: .milliseconds(50))
            }
            #expect(reactor.openDescriptorCount == 1 + queued.count)
        }
    }

    @Test func cancellingAPendingConnectThrowsCancellationError() async throws {
        try await withReactor { reactor in
            let listener = try loopbackListener(reactor, backlog: 0)
            defer { listener.close() }
            let queued = try await fillAcceptQueue(reactor, listener)
            defer { queued.forEach { $0.close() } }
            let baseline = reactor.openDescriptorCount
            let connect = Task { try await reactor.connectTCP(to: listener.localAddress, timeout: .seconds(600)) }
            try await waitUntil(reactor, "connect started") { reactor.openDescriptorCount == baseline + 1 }
            connect.cancel()
            await #expect(throws: CancellationError.self) { _ = try await connect.value }
            #expect(reactor.openDescriptorCount == baseline)
        }
    }
}
