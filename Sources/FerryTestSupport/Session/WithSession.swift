import FerrySession
import FerrySystem

/// Runs `body` with a listening session made from `configuration`, its address on 127.0.0.1 and the reactor (of its
/// own) it runs on; both end when `body` returns or throws.
public func withSession(
    _ configuration: SessionConfiguration,
    _ body: (Session, FerrySystem.SocketAddress, Reactor) async throws -> Void
) async throws {
    let reactor = try Reactor()
    defer { reactor.shutdown() }
    try await Session.run(configuration: configuration, reactor: reactor) { session in
        try await body(session, .ipv4(.loopback, port: await session.listenPort), reactor)
    }
}
