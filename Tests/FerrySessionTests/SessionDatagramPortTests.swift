import FerrySystem
import FerryTestSupport
import Testing

@testable import FerrySession

/// Datagrams arrive on the UDP port with the TCP listen port's number (one number for a firewall), and on any free
/// port when that one is taken.
extension SessionTests {
    @Test func datagramsUseTheListenPortNumberOverUDP() async throws {
        try await Self.withPair(bob: Self.configuration("bob")) { bob, alice in
            for session in [bob, alice] {
                let listen = await session.listenPort
                #expect(listen != 0)
                #expect(await session.datagramPort == listen)
            }
        }
    }

    @Test func aTakenUDPPortFallsBackToAnyFreePort() async throws {
        let reactor = try Reactor()
        defer { reactor.shutdown() }
        // Find a TCP port whose UDP twin we hold: the session must still start, its datagrams elsewhere.
        let squatter = try reactor.openUDP(bindingTo: .ipv4(.any, port: 0))
        defer { squatter.close() }
        let port = squatter.localAddress.port
        var configuration = Self.configuration("carol")
        configuration.listenPort = port
        try await Session.run(configuration: configuration, reactor: reactor) { carol in
            #expect(await carol.listenPort == port)
            let datagrams = await carol.datagramPort
            #expect(datagrams != 0 && datagrams != port)
        }
    }
}
