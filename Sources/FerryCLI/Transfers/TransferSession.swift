import FerrySession
import FerrySystem
import FerryTransfer

/// A session with a transfer engine, as `send`, `receive` and `watch` run it: the pieces a command body uses.
///
/// All three need the same scaffolding in the same order: a session with transfers enabled, the manual
/// `--peer` addresses probed, one reader of the session's events (the `PeerTracker`), an engine, and one reader
/// of the engine's events that prints them. `run` builds it, hands it to the command, and takes it down in the
/// right order afterwards: the engine stops first (so peers are told why a transfer ends), every event it
/// reported is printed, then the session says goodbye.
struct TransferSession: Sendable {
    let session: Session
    let engine: TransferEngine
    let tracker: PeerTracker
    let reporter: TransferReporter
    /// The engine's events after they were printed, when `run` was asked to forward them.
    let events: AsyncStream<TransferEvent>?

    /// Runs `body` with a started session and engine. With `forwardEvents`, `events` carries every engine event
    /// after the reporter printed it (the body must consume it). `onSessionEvent` sees every session event, in
    /// order, before the tracker records it.
    static func run<T: Sendable>(
        setup: SessionSetup, engine configuration: TransferConfiguration, reporter: TransferReporter,
        reactor: Reactor? = nil, forwardEvents: Bool = false,
        onSessionEvent: @escaping @Sendable (SessionEvent) -> Void = { _ in },
        _ body: (TransferSession) async throws -> T
    ) async throws -> T {
        try await setup.run(reactor: reactor) { session in
            await session.addManualPeers(setup.manualPeers)
            let tracker = PeerTracker { event in
                if case .sessionError(let error) = event {
                    reporter.failure(error.description)
                }
                onSessionEvent(event)
            }
            let follower = Task { await tracker.follow(session) }
            defer { follower.cancel() }
            return try await TransferEngine.run(session: session, configuration: configuration) { engine in
                let (forwarded, continuation) = AsyncStream.makeStream(of: TransferEvent.self)
                let printer = Task {
                    for await event in engine.events {
                        reporter.report(event)
                        if forwardEvents {
                            continuation.yield(event)
                        }
                    }
                    continuation.finish()
                }
                let run = TransferSession(
                    session: session, engine: engine, tracker: tracker, reporter: reporter,
                    events: forwardEvents ? forwarded : nil)
                do {
                    let result = try await body(run)
                    await engine.stop(reason: .shuttingDown)
                    await printer.value
                    return result
                } catch {
                    // Ctrl-C is a person cancelling; SIGTERM is the machine stopping this process (a service), which
                    // its log says before the transfers it ends do.
                    let person = error is CancellationError && !SignalTrap.wasTerminated
                    if error is CancellationError, SignalTrap.wasTerminated {
                        reporter.stopping(signal: "SIGTERM")
                    }
                    await engine.stop(reason: person ? .cancelledByUser : .shuttingDown)
                    await printer.value
                    throw error
                }
            }
        }
    }

    /// Connects to a discovered peer and checks that it receives files; returns the connected peer.
    func connect(_ peer: PeerInfo, timeout: Duration) async throws -> PeerInfo {
        let connected = try await session.connect(to: peer.peerID, timeout: timeout)
        try await checkReceives(connected)
        return connected
    }

    /// Connects to an address and checks that whoever answers there receives files.
    func connect(toAddress address: SocketAddress, timeout: Duration) async throws -> PeerInfo {
        let connected = try await session.connect(toAddress: address, timeout: timeout)
        try await checkReceives(connected)
        return connected
    }

    private func checkReceives(_ peer: PeerInfo) async throws {
        guard await session.capabilities(of: peer.peerID)?.contains(.transfers) == true else {
            await session.disconnect(peer.peerID)
            throw TransferError.peerCannotReceive(peer.displayName)
        }
    }
}
