import FerrySecurity
import FerryStateMachines
import FerrySystem
import FerryTestSupport
import FerryWire
import Testing

@testable import FerrySession

/// An initiator learns that an acceptor is busy (PROTOCOL.md 10.6): full, or closing our connection before its
/// preface because too many from our address wait. Both are `busyReason`s a sender retries on; a real
/// authentication failure is not.
@Suite(.serialized) struct SessionBusyTests {
    @Test func aConnectionClosedBeforeThePrefaceIsBusyNotAnAuthenticationFailure() async throws {
        var configuration = SessionTests.configuration("bob")
        configuration.maxPendingLinksPerAddress = 2
        try await withSession(configuration) { bob, address, reactor in
            let port = await bob.listenPort
            let stalled = try await SessionBoundsTests.stalledLinks(from: ["127.0.0.1", "127.0.0.1"], to: port)
            try await Session.run(configuration: SessionTests.configuration("alice"), reactor: reactor) { alice in
                do {
                    _ = try await alice.connect(toAddress: .ipv4(.loopback, port: port), timeout: .seconds(30))
                    Issue.record("connected past the per-address cap")
                } catch let error as SessionError {
                    guard case .busy = error else {
                        Issue.record("not busy: \(error)")
                        return
                    }
                    #expect(error.busyReason == "too many connections from this address are waiting")
                    #expect(error.description.contains("is busy"), "\(error)")
                }
                stalled.forEach { $0.close() }
                // Room again once the waiting connections are gone.
                var connected: PeerInfo?
                while connected == nil {
                    do {
                        connected = try await alice.connect(toAddress: .ipv4(.loopback, port: port))
                    } catch let error as SessionError where error.busyReason != nil {
                        await Task.yield()
                    }
                }
                #expect(connected?.displayName == "bob")
            }
        }
    }

    @Test func aFullAcceptorIsBusyWithItsCount() async throws {
        try await SessionTests.withPair(bob: SessionTests.configuration("bob", maxPeers: 1)) { bob, alice in
            let port = await bob.listenPort
            _ = try await alice.connect(toAddress: .ipv4(.loopback, port: port))
            let reactor = try Reactor()
            defer { reactor.shutdown() }
            try await Session.run(configuration: SessionTests.configuration("carol"), reactor: reactor) { carol in
                do {
                    _ = try await carol.connect(toAddress: .ipv4(.loopback, port: port))
                    Issue.record("connected past maxPeers")
                } catch let error as SessionError {
                    #expect(error.busyReason == "1 of 1 peers connected", "\(error)")
                }
            }
        }
    }

    @Test func aRealAuthenticationFailureIsNotBusy() {
        // The global cap's eviction closes mid-handshake without an alert: busy. A refusal by TLS is not.
        #expect(Session.busyDetail(for: .closedDuringHandshake) == "too many connections are waiting")
        #expect(Session.busyDetail(for: .handshakeFailed("bad certificate")) == nil)
        #expect(Session.busyDetail(for: .badPreface("magic")) == nil)
        #expect(SessionError.authenticationFailed(peer: "bob", detail: "x").busyReason == nil)
        #expect(SessionError.denied(peer: "bob", reason: .deniedByUser, detail: "").busyReason == nil)
    }
}
