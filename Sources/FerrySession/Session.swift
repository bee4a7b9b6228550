import FerrySecurity
import FerryStateMachines
import FerrySystem
import FerryWire

/// A GKSession for Linux: discovery, connection requests answered by accept or deny, reliable and unreliable
/// messages, liveness, and an ordered stream of events.
///
/// Create one with `Session.run(configuration:) { session in ... }`: every socket is closed and every stream
/// ended when the closure returns or throws. All state lives in this actor; socket I/O happens in the reactor and
/// in small tasks (one reader and one writer per link, one loop per UDP socket, one ticker) that call back in.
public actor Session {
    /// What the session was created with.
    public nonisolated let configuration: SessionConfiguration
    /// This session's peer ID: random for each session, as GameKit's peer IDs.
    public nonisolated let localPeerID: PeerID
    /// Every event of the session, in order. Ends when the session closes.
    public nonisolated let events: AsyncStream<SessionEvent>
    /// Frames of the transfer protocol and the end of links, for the transfer engine. Carries frames only when
    /// `configuration.transfersEnabled`. Ends when the session closes. An `AsyncChannel` (one consumer, read with
    /// `for await`), not an `AsyncStream`: it carries an element per frame, and costs a fraction of one.
    public nonisolated let transferEvents: AsyncChannel<TransferLinkEvent>
    /// Transfer frames in `transferEvents` not yet taken, per peer: a reader stops past the configuration's
    /// `transferBacklogLimit`.
    nonisolated let transferBacklog: TransferBacklog

    let eventSink: AsyncStream<SessionEvent>.Continuation
    /// Where the session yields `transferEvents`.
    var transferSink: AsyncChannel<TransferLinkEvent> { transferEvents }
    let reactor: Reactor
    let tlsContext: TLSContext
    /// Pinned peers, from the configuration and `trust(_:name:)`.
    var trustedDevices: [DeviceID: String]
    let clock = ContinuousClock()
    var listener: TCPListener?
    var datagramSocket: UDPSocket?
    var discoverySocket: UDPSocket?
    var discoveryInterfaces: [IPv4Address] = []
    var discoveryCache: DiscoveryCache<SocketAddress>
    var links: [LinkID: LinkRecord] = [:]
    var peers: [PeerID: PeerRecord] = [:]
    var nextLinkID = 0
    var loops: [Task<Void, Never>] = []
    var writerTasks: [LinkID: Task<Void, Never>] = [:]
    var readerTasks: [LinkID: Task<Void, Never>] = [:]
    /// Links whose reader waits instead of reading: tests play a peer that stops reading (`pauseReading(of:)`).
    nonisolated let pausedReaders = ReadingPause()
    /// Links closed by the protocol whose stream is still open: the writer flushes its last frames and half-closes,
    /// the reader reads (and drops) until the peer closes too; closed then, or at the deadline at the latest. The
    /// deadline moves on (up to `limit`) while the peer still sends: it is still reading what we sent before.
    /// Links never admitted keep at most `maxPendingLinks` of these (`keepClosing`).
    var closingStreams: [LinkID: ClosingStream] = [:]
    /// Tests: while set, `tick` closes no closing link at its deadline, so that the bound on them is seen alone.
    var closingDeadlinesHeld = false
    var manualAddresses: [SocketAddress: ContinuousClock.Instant] = [:]
    var manualFailuresReported: Set<SocketAddress> = []
    var serverStateValue: ServerState
    /// How many connection requests may still become prompts (`AcceptPolicy.ask`); see `Session+Admission`.
    var requestLimiter: RequestLimiter<DeviceID>
    /// The transfer engine's live vouches (`Session+Swarm`): devices admitted as swarm links without a prompt.
    nonisolated let vouches = VouchTable()
    var isClosed = false
    let sessionTag: UInt32
    /// Counters for diagnostics and tests.
    public internal(set) var statistics = SessionStatistics()
    /// The TCP port links are accepted on (the one bound, when the configuration asked for any free port).
    public internal(set) var listenPort: UInt16 = 0
    var datagramPort: UInt16 = 0

    init(configuration: SessionConfiguration, reactor: Reactor) throws(SessionError) {
        try Self.validate(configuration)
        self.configuration = configuration
        self.reactor = reactor
        do {
            self.tlsContext = try TLSContext(identity: configuration.identity)
        } catch {
            throw .invalidConfiguration("could not set up TLS: \(error)")
        }
        self.trustedDevices = configuration.trustedDevices
        let backlog = TransferBacklog(limit: configuration.transferBacklogLimit)
        self.transferBacklog = backlog
        self.transferEvents = AsyncChannel { event in
            if case .frame(let frame, let peerID) = event {
                backlog.take(Frame.headerLength + frame.payload.count, from: peerID)
            }
        }
        self.localPeerID = PeerID(rawValue: UInt64.random(in: 1..<PeerID.firstForeign))
        (events, eventSink) = AsyncStream.makeStream(of: SessionEvent.self)
        self.sessionTag = Datagram.sessionTag(for: configuration.sessionID)
        self.discoveryCache = DiscoveryCache(
            configuration: .init(
                localPeerID: localPeerID, sessionID: configuration.sessionID,
                announceInterval: configuration.announceInterval))
        self.serverStateValue = configuration.mode == .client ? .idle : .acceptingConnections
        self.requestLimiter = RequestLimiter(
            global: configuration.connectionRequestRate, perRequester: configuration.connectionRequestRatePerPeer,
            now: ContinuousClock.now)
    }

    /// Runs `body` with a started session and closes the session afterwards, whatever happens.
    ///
    /// With no `reactor`, the session makes its own and shuts it down at the end.
    public static func run<T: Sendable>(
        configuration: SessionConfiguration, reactor: Reactor? = nil,
        _ body: (Session) async throws -> T
    ) async throws -> T {
        let ownReactor = reactor == nil
        let reactor = try reactor ?? Reactor()
        defer { if ownReactor { reactor.shutdown() } }
        let session = try Session(configuration: configuration, reactor: reactor)
        do {
            try await session.start()
            let result = try await body(session)
            await session.close()
            return result
        } catch {
            await session.close()
            throw error
        }
    }

    static func validate(_ configuration: SessionConfiguration) throws(SessionError) {
        let hello = Hello(
            peerID: PeerID(rawValue: 1), deviceID: configuration.deviceID, mode: configuration.mode,
            capabilities: [], listenPort: 0, datagramPort: 0, sessionID: configuration.sessionID,
            displayName: configuration.displayName)
        do {
            try hello.validate()
        } catch {
            throw .invalidConfiguration("invalid session configuration: \(error)")
        }
        guard configuration.maxPeers >= 1 else { throw .invalidConfiguration("maxPeers must be at least 1") }
        guard configuration.transferBacklogLimit >= 1 else {
            throw .invalidConfiguration("transferBacklogLimit must be at least 1 byte")
        }
        guard configuration.maxPendingLinks >= 1, configuration.maxPendingLinksPerAddress >= 1 else {
            throw .invalidConfiguration("maxPendingLinks and maxPendingLinksPerAddress must be at least 1")
        }
        guard configuration.disconnectTimeout >= .seconds(2) else {
            throw .invalidConfiguration(
                "the disconnect timeout must be at least 2 seconds (peers send a heartbeat every second)")
        }
    }

    // MARK: Lifecycle

    /// Binds the sockets and starts discovery, the accept loop and the ticker.
    func start() async throws {
        try openListener()
        try openDatagramSocket()
        if configuration.discoveryEnabled {
            do {
                try openDiscovery()
            } catch let error as SessionError {
                if case .invalidConfiguration = error { throw error }
                emit(.sessionError(error))
            }
        }
        let now = clock.now
        if discoverySocket != nil {
            handleDiscovery(discoveryCache.started(now: now, jitter: Double.random(in: 0..<1)))
        }
        startLoops()
    }

    /// How long a closed link waits for the peer to close once the peer went quiet (PROTOCOL.md 3.4).
    static let closeGrace = Duration.seconds(2)
    /// How long a closed link waits for the peer to close at most, even while the peer still sends (acknowledging
    /// data that was in the socket buffers when the link closed).
    static let closeLimit = Duration.seconds(10)

    /// Says goodbye to every peer, announces that this peer leaves, closes every socket and ends `events`.
    ///
    /// Returns once every link closed cleanly (goodbye sent, write side shut down, the peer's end read), or once
    /// no link heard from its peer for `closeGrace` (`closeLimit` at most).
    public func close() async {
        guard !isClosed else { return }
        for id in links.keys.sorted() {
            disconnectLink(id, reason: .shuttingDown)
        }
        if discoverySocket != nil { announce(query: false, leaving: true) }
        isClosed = true
        listener?.close()
        datagramSocket?.close()
        discoverySocket?.close()
        for loop in loops { loop.cancel() }
        // Give the links a bounded moment to close cleanly: each writer delivers its goodbye and half-closes, each
        // reader reads until the peer closes its side (closing with the peer's bytes unread would make the kernel
        // reset the connection and destroy what we sent). Then close whatever is left: closing a stream fails a
        // write stuck on a peer that stopped reading and a read from a peer that never closes, so every task ends.
        let tasks = Array(writerTasks.values) + Array(readerTasks.values)
        let readers = Array(readerTasks.values)
        let streams = closingStreams.values.map(\.stream) + links.values.map(\.stream)
        // In a task of its own: `close` often runs because the caller's task was cancelled (Ctrl-C), and in that
        // task the grace sleep would end at once and cut every link (the peer then saw a reset, not our goodbye).
        let reactor = self.reactor
        await Task.detached { [weak self] in
            await withTaskGroup(of: Void.self) { group in
                group.addTask {
                    for task in tasks { await task.value }
                }
                group.addTask {
                    let clock = ContinuousClock()
                    while let self, await !self.closingOverdue() {
                        do { try await reactor.sleep(until: clock.now + .milliseconds(100)) } catch { return }
                    }
                }
                await group.next()
                for stream in streams { stream.close() }
                for reader in readers { reader.cancel() }
                group.cancelAll()
            }
        }.value
        closingStreams.removeAll()
        links.removeAll()
        eventSink.finish()
        transferSink.finish()
    }

    /// Whether every link still closing is past its deadline (see `closingStreams`).
    func closingOverdue() -> Bool {
        let now = clock.now
        return closingStreams.values.allSatisfy { now >= $0.deadline }
    }

    // MARK: Server state (GameKit's `available`, Snap!'s matchmaking-server states)

    /// Whether new connections are taken now (GameKit's `available`; see `setServerState(_:)`).
    public var serverState: ServerState { serverStateValue }

    /// Starts or stops taking new connections; advertising follows.
    public func setServerState(_ state: ServerState) {
        guard configuration.mode != .client, !isClosed else { return }
        serverStateValue = state
        if discoverySocket != nil { announce(query: false) }
    }

    // MARK: Peers

    /// GameKit's `peersWithConnectionState:`.
    public func peers(withState state: PeerState? = nil) -> [PeerInfo] {
        peers.values.map(\.info).filter { state == nil || $0.state == state }.sorted { $0.peerID < $1.peerID }
    }

    /// GameKit's `displayNameForPeer:`.
    public func displayName(for peerID: PeerID) -> String? {
        peers[peerID]?.displayName
    }

    /// What the session knows of one peer now; nil for a peer it never saw.
    public func peer(_ peerID: PeerID) -> PeerInfo? {
        peers[peerID]?.info
    }

    // MARK: Events

    func log(_ message: @autoclosure () -> String, level: Int = 1) {
        configuration.log?(level, message())
    }

    func emit(_ event: SessionEvent) {
        guard !isClosed else { return }
        eventSink.yield(event)
    }

    /// Reports the peer's state if it changed since the last report.
    func reportState(of peerID: PeerID, reason: SessionError? = nil) {
        guard var peer = peers[peerID] else { return }
        let state = peer.state
        guard peer.reportedState != state else { return }
        peer.reportedState = state
        peers[peerID] = peer
        emit(.peerStateChanged(peer.info, state, reason: reason))
    }
}

/// Counters a session keeps for diagnostics and tests.
public struct SessionStatistics: Equatable, Sendable {
    /// Incoming links taken (before their handshake).
    public var linksAccepted = 0
    /// Pending links closed because `maxPendingLinks` were pending (the oldest goes).
    public var linksEvicted = 0
    /// New links closed at once because their address had `maxPendingLinksPerAddress` pending.
    public var linksRefusedPerAddress = 0
    /// Connection requests denied because prompts came too fast (`connectionRequestRate`, or per peer).
    public var requestsRateLimited = 0
    /// Links closed because the peer could not be authenticated (bad preface, TLS failure, wrong certificate).
    public var linksUnauthenticated = 0
    /// Datagrams dropped before authentication: malformed, another session, an unknown or unconnected sender.
    public var datagramsDropped = 0
    /// Datagrams whose seal did not open: forged, changed, or sealed for another link.
    public var datagramsForged = 0
    /// Authentic datagrams received a second time (or too late to tell).
    public var datagramsReplayed = 0
    /// Discovery beacons dropped: malformed, too large, another session, or this peer itself.
    public var beaconsRejected = 0
    /// Links never admitted whose closing drain was cut short because `maxPendingLinks` of them were draining.
    public var closingLinksCut = 0
}

extension Session {
    /// The most bytes of transfer frames one peer ever had waiting for the transfer engine to take them (at most
    /// `configuration.transferBacklogLimit` and one frame): tests prove the bound with it.
    public nonisolated var largestTransferBacklog: Int { transferBacklog.largest }
    /// How many times a link's reader stopped because its peer had `transferBacklogLimit` bytes waiting.
    public nonisolated var transferBacklogPauses: Int { transferBacklog.pauses }
}

/// A link closed by the protocol whose stream is still open (`Session.closingStreams`).
struct ClosingStream {
    var stream: any ByteStream
    var deadline: ContinuousClock.Instant
    var limit: ContinuousClock.Instant
    /// Whether the link was its peer's connected link when it closed.
    var admitted: Bool
}
