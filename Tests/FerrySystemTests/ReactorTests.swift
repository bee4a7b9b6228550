@testable import FerrySystem
import Synchronization
import Testing

@Suite("Reactor")
struct ReactorTests {
    @Test func sleepReturnsAtOrAfterItsDeadline() async throws {
        try await withReactor { reactor in
            for milliseconds in [0, 1, 20] {
                let deadline = ContinuousClock.now + .milliseconds(milliseconds)
                try await reactor.sleep(until: deadline)
                #expect(ContinuousClock.now >= deadline)
            }
            try await reactor.sleep(until: .now - .seconds(1))  // a past deadline returns
            #expect(reactor.core.pendingTimerCount == 0)
        }
    }

    /// The timer heap hands out expired timers in deadline order, whatever the insertion order (checked on
    /// the heap itself with a fixed clock: no sleeping, no dependence on scheduling).
    @Test func timersExpireInDeadlineOrder() {
        let start = ContinuousClock.now
        var queue = TimerQueue()
        let fired = Mutex<[Int]>([])
        for index in [5, 3, 1, 4, 2] {
            queue.insert(id: UInt64(index), deadline: start + .milliseconds(10 * index)) { _ in
                fired.withLock { $0.append(index) }
            }
        }
        _ = queue.remove(id: 4)  // a cancelled timer never fires
        #expect(queue.earliestDeadline() == start + .milliseconds(10))
        for action in queue.popExpired(now: start + .milliseconds(30)) { action(nil) }
        #expect(fired.withLock { $0 } == [1, 2, 3])
        for action in queue.popExpired(now: start + .seconds(1)) { action(nil) }
        #expect(fired.withLock { $0 } == [1, 2, 3, 5])
        #expect(queue.count == 0)
    }

    @Test func cancellingPendingSleepThrowsCancellationError() async throws {
        try await withReactor { reactor in
            let sleeper = Task { try await reactor.sleep(until: .now + .seconds(3600)) }
            try await waitUntil(reactor, "sleep pending") { reactor.core.pendingTimerCount == 1 }
            sleeper.cancel()
            await #expect(throws: CancellationError.self) { try await sleeper.value }
            #expect(reactor.core.pendingTimerCount == 0)
        }
    }

    @Test func sleepInACancelledTaskThrowsAtOnce() async throws {
        try await withReactor { reactor in
            let sleeper = Task {
                withUnsafeCurrentTask { $0?.cancel() }
                try await reactor.sleep(until: .now + .seconds(3600))
            }
            await #expect(throws: CancellationError.self) { try await sleeper.value }
        }
    }

    @Test func shutdownFailsEveryWaiter() async throws {
        let reactor = try Reactor()
        defer { reactor.shutdown() }
        let listener = try loopbackListener(reactor)
        let (client, server) = try await connectedPair(reactor)
        let udp = try reactor.openUDP(bindingTo: .ipv4(.loopback, port: 0))
        let accept = Task { try await listener.accept() }
        let read = Task { try await client.read(maxBytes: 10) }
        let receive = Task { try await udp.receive() }
        let sleep = Task { try await reactor.sleep(until: .now + .seconds(3600)) }
        try await waitUntil(reactor, "all pending") {
            listener.registration.suspendedWaiterCount == 1 && client.registration.suspendedWaiterCount == 1
                && udp.registration.suspendedWaiterCount == 1 && reactor.core.pendingTimerCount >= 1
        }
        reactor.shutdown()
        await #expect(throws: ReactorError.reactorShutDown) { _ = try await accept.value }
        await #expect(throws: ReactorError.reactorShutDown) { _ = try await read.value }
        await #expect(throws: ReactorError.reactorShutDown) { _ = try await receive.value }
        await #expect(throws: ReactorError.reactorShutDown) { try await sleep.value }
        await #expect(throws: ReactorError.reactorShutDown) { try await server.write([1]) }
        #expect(reactor.openDescriptorCount == 0)
        #expect(throws: ReactorError.reactorShutDown) { _ = try loopbackListener(reactor) }
        await #expect(throws: ReactorError.reactorShutDown) { try await reactor.sleep(until: .now + .seconds(1)) }
        reactor.shutdown()  // idempotent
    }

    @Test func descriptorCountReturnsToBaselineAfterCloses() async throws {
        try await withReactor { reactor in
            #expect(reactor.openDescriptorCount == 0)
            let listener = try loopbackListener(reactor)
            let (client, server) = try await connectedPair(reactor)
            let udp = try reactor.openUDP(bindingTo: .ipv4(.loopback, port: 0))
            #expect(reactor.openDescriptorCount == 4)
            for closable in [client, server] { closable.close() }
            udp.close()
            listener.close()
            #expect(reactor.openDescriptorCount == 0)
        }
    }

    @Test func droppedTransportsCloseTheirDescriptors() async throws {
        try await withReactor { reactor in
            do {
                let (client, server) = try await connectedPair(reactor)
                _ = try reactor.openUDP(bindingTo: .ipv4(.loopback, port: 0))
                #expect(client.localAddress == server.remoteAddress)
            }
            #expect(reactor.openDescriptorCount == 0)
        }
    }

    @Test func acceptsFiveHundredConnections() async throws {
        try await withReactor { reactor in
            let count = 500
            let listener = try loopbackListener(reactor, backlog: 1024)
            defer { listener.close() }
            let acceptor = Task {
                var accepted: [TCPConnection] = []
                while accepted.count < count { accepted.append(try await listener.accept()) }
                return accepted
            }
            var clients: [TCPConnection] = []
            try await withThrowingTaskGroup(of: TCPConnection.self) { group in
                for _ in 0..<count {
                    group.addTask { try await reactor.connectTCP(to: listener.localAddress, timeout: .seconds(120)) }
                }
                for try await client in group { clients.append(client) }
            }
            let servers = try await acceptor.value
            #expect(Set(clients.map(\.localAddress)) == Set(servers.map(\.remoteAddress)))
            #expect(reactor.openDescriptorCount == 1 + 2 * count)
            // Every link works: one byte each way on a sample.
            for (client, server) in zip(clients, servers).prefix(20) {
                try await client.write([9])
                let peer = try #require(servers.first { $0.remoteAddress == client.localAddress })
                #expect(try await peer.read(maxBytes: 4) == [9])
                try await server.write([8])
            }
            for (client, server) in zip(clients, servers) {
                client.close()
                server.close()
            }
            #expect(reactor.openDescriptorCount == 1)
        }
    }
}
