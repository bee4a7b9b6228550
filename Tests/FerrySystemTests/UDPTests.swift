@testable import FerrySystem
import Testing

@Suite("UDP")
struct UDPTests {
    @Test func sendsAndReceivesOnLoopback() async throws {
        try await withReactor { reactor in
            let sender = try reactor.openUDP(bindingTo: .ipv4(.loopback, port: 0))
            let receiver = try reactor.openUDP(bindingTo: .ipv4(.loopback, port: 0))
            defer {
                sender.close()
                receiver.close()
            }
            #expect(receiver.localAddress.port != 0)
            #expect(try sender.send([1, 2, 3], to: receiver.localAddress))
            let (bytes, from) = try await receiver.receive()
            #expect(bytes == [1, 2, 3])
            #expect(from == sender.localAddress)
            // Truncation to maxBytes, and a pending receive resumed by a later datagram.
            let pending = Task { try await receiver.receive(maxBytes: 4) }
            try await waitUntil(reactor, "receive suspended") { receiver.registration.suspendedWaiterCount == 1 }
            try sender.send(Array(0..<100), to: receiver.localAddress)
            #expect(try await pending.value.bytes == [0, 1, 2, 3])
        }
    }

    @Test func sendsAndReceivesOverIPv6Loopback() async throws {
        try await withReactor { reactor in
            let sender: UDPSocket
            do {
                sender = try reactor.openUDP(bindingTo: .ipv6(.loopback, port: 0, scopeID: 0))
            } catch let error as SystemError where error.errno == .addressNotAvailable {
                return  // no IPv6 loopback on this machine
            }
            let receiver = try reactor.openUDP(bindingTo: .ipv6(.loopback, port: 0, scopeID: 0))
            defer {
                sender.close()
                receiver.close()
            }
            try sender.send([7], to: receiver.localAddress)
            let (bytes, from) = try await receiver.receive()
            #expect(bytes == [7])
            #expect(from == sender.localAddress)
            #expect(from.description.hasPrefix("[::1]:"))
        }
    }

    @Test func cancellingAndClosingPendingReceive() async throws {
        try await withReactor { reactor in
            let socket = try reactor.openUDP(bindingTo: .ipv4(.loopback, port: 0))
            let cancelled = Task { try await socket.receive() }
            try await waitUntil(reactor, "receive suspended") { socket.registration.suspendedWaiterCount == 1 }
            cancelled.cancel()
            await #expect(throws: CancellationError.self) { _ = try await cancelled.value }
            let closed = Task { try await socket.receive() }
            try await waitUntil(reactor, "receive suspended") { socket.registration.suspendedWaiterCount == 1 }
            socket.close()
            await #expect(throws: ReactorError.closed) { _ = try await closed.value }
            #expect(throws: ReactorError.closed) { try socket.send([1], to: .ipv4(.loopback, port: 9)) }
            #expect(reactor.openDescriptorCount == 0)
        }
    }

    /// Two sockets share one port (SO_REUSEADDR + SO_REUSEPORT) and join 239.255.70.89 on 127.0.0.1; a sender
    /// with IP_MULTICAST_IF 127.0.0.1 reaches both. Nothing leaves the loopback interface.
    @Test func multicastOnLoopbackReachesEveryMember() async throws {
        try await withReactor { reactor in
            let group = try #require(IPv4Address("239.255.70.89"))
            let first = try reactor.openUDP(bindingTo: .ipv4(.any, port: 0), reuseAddress: true, reusePort: true)
            let port = first.localAddress.port
            let second = try reactor.openUDP(bindingTo: .ipv4(.any, port: port), reuseAddress: true, reusePort: true)
            let sender = try reactor.openUDP(bindingTo: .ipv4(.loopback, port: 0))
            defer {
                first.close()
                second.close()
                sender.close()
            }
            try first.joinMulticast(group: group, interface: .loopback)
            try second.joinMulticast(group: group, interface: .loopback)
            try sender.setMulticastInterface(.loopback)
            try sender.setMulticastLoop(true)
            try sender.setMulticastTTL(1)
            #expect(try sender.send(Array("beacon".utf8), to: .ipv4(group, port: port)))
            for member in [first, second] {
                let (bytes, from) = try await member.receive()
                #expect(bytes == Array("beacon".utf8))
                #expect(from == sender.localAddress)
            }
            try first.leaveMulticast(group: group, interface: .loopback)
        }
    }
}
