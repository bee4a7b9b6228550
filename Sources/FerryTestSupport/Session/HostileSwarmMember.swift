import FerrySecurity
import FerrySession
import FerrySystem
import FerryWire

/// Mallory as a recipient of a broadcast (docs/PROTOCOL.md 11.11): a real session (TLS, a device ID of its own) that
/// takes a real `ferry send`'s offer, replies `relay`, acknowledges the sender's chunks `stored` so the sender is
/// satisfied, vouches for the other members so their swarm links are admitted, announces the chunks it holds with
/// `swarmHave`, and answers the other members' `swarmRequest`s as its `Behaviour` says: with one bit of the chunk
/// flipped (and a `sha256` field that matches the flipped bytes, so only a check against the sender's digest catches
/// it), with the true bytes, with random bytes (having announced every chunk, held or not), or with a chunk nobody
/// asked for.
///
/// It gets the chunks it does not seed from the sender (`swarmRequest` on the sender's link, at most K = 4 at once,
/// each once; once cut off, the sender sends them anyway), keeps a chunk a member sent it (after a test's `request`)
/// when it matches the sender's digest, acknowledging it `storedFromPeer`, and answers each `fileEnd` with `published`
/// once it holds the file: the sender's transfer to it ends, so a test can expect the sender to exit 0.
///
/// The same actor, started without an offer, is an outsider: `connect(toPort:)` and `request(_:file:chunks:of:)` ask a
/// member for chunks of a swarm it is not in. Everything it sees is kept as `Observation`s (`waitFor`, `observations`).
public actor HostileSwarmMember {
    /// What the member does wrong (and right).
    public struct Behaviour: Sendable {
        /// Reply `relay` to an offer with a swarm section (take part in the swarm).
        public var relay: Bool
        /// Answer requests with one bit of the chunk flipped.
        public var flipBytes: Bool
        /// Announce every chunk whose digest it has, held or not, and answer every request with random bytes (as if
        /// it held none of them), never with `notHeld`.
        public var announceUnheld: Bool
        /// Push a chunk nobody requested to each member whose link comes up.
        public var sendUnrequested: Bool
        /// Never answer a `fileEnd`: the sender's broadcast, and with it every member's swarm, stays open until this
        /// member goes (a test needs a swarm that is surely live).
        public var holdsResults: Bool
        /// Ask the sender for every chunk it does not seed to this member as soon as its digest comes, all at once
        /// (not K at a time): what a member does that wants the sender to queue the whole file for it (issue 27).
        public var requestsEverything: Bool

        public init(
            relay: Bool = true, flipBytes: Bool = true, announceUnheld: Bool = false, sendUnrequested: Bool = false,
            holdsResults: Bool = false, requestsEverything: Bool = false
        ) {
            self.relay = relay
            self.flipBytes = flipBytes
            self.announceUnheld = announceUnheld
            self.sendUnrequested = sendUnrequested
            self.holdsResults = holdsResults
            self.requestsEverything = requestsEverything
        }

        /// Relays every chunk asked of it with one bit flipped.
        public static let flipper = Behaviour()
        /// Relays the true bytes: a member that keeps the rules (a colluder's inside half, a control).
        public static let honest = Behaviour(flipBytes: false)
    }

    /// Something the member saw or did, in order.
    public enum Observation: Sendable {
        /// The sender's offer (the first one; later offers are denied).
        case offer(Offer, from: PeerID)
        /// A session link came up (`member`: its index in the offer's swarm, when it is one).
        case linkUp(PeerID, member: Int?)
        /// A session link ended.
        case linkDown(PeerID, member: Int?, reason: String)
        /// A transfer frame arrived (a chunk's data is dropped here; see `relayedChunk`).
        case message(TransferMessage, from: PeerID, member: Int?)
        /// A chunk arrived whose transferID is the swarm ID (a relayed chunk): whether its raw bytes match the
        /// sender's digest (false when the digest is unknown).
        case relayedChunk(fileIndex: UInt32, chunkIndex: UInt64, from: PeerID, member: Int?, matches: Bool)
        /// It answered a request (or pushed a chunk) with `flipped` or true (or random, `held` false) bytes.
        case served(fileIndex: UInt32, chunkIndex: UInt64, to: PeerID, member: Int?, flipped: Bool, held: Bool)
        /// It sent a `fileResult` `published` for every accepted file: the sender has nothing more to send it.
        case finished
    }

    struct ChunkKey: Hashable, Comparable {
        var file: UInt32
        var chunk: UInt64
        static func < (a: ChunkKey, b: ChunkKey) -> Bool { (a.file, a.chunk) < (b.file, b.chunk) }
    }

    public let session: Session
    public let behaviour: Behaviour
    public private(set) var observations: [Observation] = []

    var sender: PeerID?
    var offer: Offer?
    var vouch: VouchToken?
    var latestList: [UInt16] = []
    var digests: [ChunkKey: [UInt8]] = [:]
    var seeds: [ChunkKey: UInt16] = [:]
    var held: [ChunkKey: [UInt8]] = [:]
    var wanted: [ChunkKey] = []
    var askedOfSender: Set<ChunkKey> = []
    var outstandingWithSender: Set<ChunkKey> = []
    var ended: Set<UInt32> = []
    var resulted: Set<UInt32> = []
    var greeted: Set<PeerID> = []
    var pushed: Set<PeerID> = []
    var nextWaiter = 0
    var waiters:
        [Int: (
            from: Int, match: @Sendable (Observation) -> Bool,
            continuation: CheckedContinuation<(index: Int, observation: Observation)?, Never>
        )] = [:]

    init(session: Session, behaviour: Behaviour) {
        self.session = session
        self.behaviour = behaviour
    }

    /// Runs `body` with a member on a session of its own (session ID `sessionID`, display name `name`, accept policy
    /// `all`, transfers on, no discovery, listening on an ephemeral port); everything ends when `body` returns.
    public static func run<T: Sendable>(
        sessionID: String, name: String, behaviour: Behaviour = .flipper, identity: DeviceIdentity? = nil,
        _ body: (HostileSwarmMember) async throws -> T
    ) async throws -> T {
        var configuration = SessionConfiguration(
            sessionID: sessionID, displayName: name, identity: try identity ?? DeviceIdentity.generate(),
            listenPort: 0, discoveryEnabled: false, acceptPolicy: .all, transfersEnabled: true)
        configuration.handshakeTimeout = TestIdentity.handshakeTimeout
        return try await Session.run(configuration: configuration) { session in
            let member = HostileSwarmMember(session: session, behaviour: behaviour)
            let frames = Task {
                for await event in session.transferEvents { await member.handle(event) }
            }
            let links = Task {
                for await event in session.events { await member.handle(event) }
            }
            defer {
                frames.cancel()
                links.cancel()
            }
            return try await body(member)
        }
    }

    /// The port its session listens on (for `ferry send --to 127.0.0.1:PORT`).
    public var port: UInt16 {
        get async { await session.listenPort }
    }

    /// Chunks it asked the sender for (`swarmRequest` on the sender's link).
    public var askedOfSenderCount: Int { askedOfSender.count }

    /// Chunks the sender sent it that it had asked for.
    public internal(set) var answersFromSender = 0

    /// The swarm ID of the offer it took, once it took one.
    public var swarmID: SwarmID? { offer?.swarm?.swarmID }

    /// Its own device ID.
    public nonisolated var deviceID: DeviceID { session.configuration.deviceID }

    /// The first observation (past or future) that `match` accepts; nil when none came within `timeout`.
    public func waitFor(
        timeout: Duration = .seconds(120), _ match: @escaping @Sendable (Observation) -> Bool
    ) async -> Observation? {
        await waitFor(from: 0, timeout: timeout, match)?.observation
    }

    /// The first observation at index `from` or later (past or future) that `match` accepts, with its index in
    /// `observations`; nil when none came within `timeout`. Counting answers one by one: wait from the index after
    /// the last one found.
    public func waitFor(
        from start: Int, timeout: Duration = .seconds(120), _ match: @escaping @Sendable (Observation) -> Bool
    ) async -> (index: Int, observation: Observation)? {
        if start < observations.count, let index = observations[start...].firstIndex(where: match) {
            return (index, observations[index])
        }
        nextWaiter += 1
        let id = nextWaiter
        let timer = Task {
            try? await Task.sleep(for: timeout)
            self.expire(id)
        }
        defer { timer.cancel() }
        return await withCheckedContinuation { continuation in
            waiters[id] = (start, match, continuation)
        }
    }

    func expire(_ id: Int) {
        waiters.removeValue(forKey: id)?.continuation.resume(returning: nil)
    }

    func record(_ observation: Observation) {
        observations.append(observation)
        let index = observations.count - 1
        for (id, waiter) in waiters where index >= waiter.from && waiter.match(observation) {
            waiters.removeValue(forKey: id)
            waiter.continuation.resume(returning: (index, observation))
        }
    }

    // MARK: Outsider

    /// Opens an ordinary session link to 127.0.0.1:`port` (no vouch, no pin): the peer it reached.
    public func connect(toPort port: Int) async throws -> PeerID {
        try await session.connect(toAddress: .ipv4(.loopback, port: UInt16(port)), timeout: .seconds(30)).peerID
    }

    /// Sends `swarmRequest`s for chunks `chunks` of file `file` in the swarm `swarmID` to `peer`, codecs none.
    public func request(_ swarmID: SwarmID, file: UInt32, chunks: [UInt64], of peer: PeerID) async throws {
        for chunk in chunks {
            let request = SwarmRequest(swarmID: swarmID, fileIndex: file, chunkIndex: UInt32(chunk), codecs: [])
            try await session.sendTransferFrame([TransferMessage.swarmRequest(request).encoded()], to: peer)
        }
    }

    /// Sends one message, come what may (a link that closed meanwhile is the test's business, not the member's).
    func send(_ message: TransferMessage, to peer: PeerID) async {
        _ = try? await session.sendTransferFrame([message.encoded()], to: peer)
    }

    // MARK: Events

    func handle(_ event: SessionEvent) async {
        guard case .peerStateChanged(let info, .connected, _) = event else { return }
        record(.linkUp(info.peerID, member: memberIndex(of: info.deviceID)))
        await greet(info.peerID, deviceID: info.deviceID)
    }

    func handle(_ event: TransferLinkEvent) async {
        switch event {
        case .peerDisconnected(let peer, let reason):
            let device = await session.peer(peer)?.deviceID
            record(.linkDown(peer, member: device.flatMap { memberIndex(of: $0) }, reason: reason))
        case .frame(let frame, let peer):
            guard let message = try? TransferMessage(frame: frame) else { return }
            let member = await memberIndex(of: peer)
            record(.message(Self.withoutData(message), from: peer, member: member))
            await received(message, from: peer, member: member)
        }
    }

    static func withoutData(_ message: TransferMessage) -> TransferMessage {
        guard case .chunk(var chunk) = message else { return message }
        chunk.data = []
        return .chunk(chunk)
    }

    func memberIndex(of deviceID: DeviceID) -> Int? {
        offer?.swarm?.index(of: deviceID)
    }

    func memberIndex(of peer: PeerID) async -> Int? {
        guard let device = await session.peer(peer)?.deviceID else { return nil }
        return memberIndex(of: device)
    }

    /// A member whose link is up (or was up before the offer came) gets everything announced, and a chunk it did
    /// not ask for when `sendUnrequested`; once.
    func greet(_ peer: PeerID, deviceID: DeviceID) async {
        guard let swarm = offer?.swarm, peer != sender, memberIndex(of: deviceID) != nil,
            deviceID != self.deviceID, !greeted.contains(peer)
        else { return }
        greeted.insert(peer)
        for (file, chunks) in Dictionary(grouping: announceable(), by: \.file) {
            await announce(file: file, chunks: chunks.map(\.chunk), to: [peer], swarmID: swarm.swarmID)
        }
        await pushUnrequested()
    }

    /// With `sendUnrequested`: each greeted member gets, once, a chunk it did not ask for (true bytes of the first
    /// chunk held; nothing until one is).
    func pushUnrequested() async {
        guard behaviour.sendUnrequested, let swarmID, let key = held.keys.min() else { return }
        for peer in greeted.subtracting(pushed).sorted() {
            pushed.insert(peer)
            await serve(key, to: peer, member: await memberIndex(of: peer), swarmID: swarmID)
        }
    }

    /// What it tells members it holds.
    func announceable() -> [ChunkKey] {
        (behaviour.announceUnheld ? Array(digests.keys) : Array(held.keys)).sorted()
    }

    func announce(file: UInt32, chunks: [UInt64], to peers: [PeerID], swarmID: SwarmID) async {
        let ranges = chunks.sorted().map { $0..<($0 + 1) }
        for start in stride(from: 0, to: ranges.count, by: Limits.maxSwarmEntriesPerFrame) {
            let batch = Array(ranges[start..<min(ranges.count, start + Limits.maxSwarmEntriesPerFrame)])
            let have = SwarmHave(swarmID: swarmID, fileIndex: file, ranges: batch)
            for peer in peers {
                await send(.swarmHave(have), to: peer)
            }
        }
    }

    /// The connected peers that are members of the swarm (not the sender, not itself).
    func memberPeers() async -> [PeerID] {
        guard offer?.swarm != nil else { return [] }
        return await session.peers(withState: .connected).filter {
            $0.peerID != sender && $0.deviceID != deviceID && memberIndex(of: $0.deviceID) != nil
        }.map(\.peerID)
    }
}
