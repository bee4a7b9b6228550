import FerrySecurity
import FerryStateMachines
import FerrySystem
import FerryWire

/// Everything a session is created with: GameKit's `initWithSessionID:displayName:sessionMode:` and the knobs
/// that GameKit kept as properties (`disconnectTimeout`, `available`, the matchmaking server's `maxClients`).
public struct SessionConfiguration: Sendable {
    /// Peers with another session ID never see each other.
    public var sessionID: String
    /// The name other peers show for this one.
    public var displayName: String
    /// Server (advertises, accepts), client (browses, connects) or peer (both): GameKit's `sessionMode`.
    public var mode: PeerMode
    /// This install's key and certificate: every link's TLS presents it.
    public var identity: DeviceIdentity
    /// Pinned peers (device ID -> the name they were pinned under): `AcceptPolicy.trusted` accepts these, and a
    /// peer that shows a pinned name with another device ID is refused (`SessionError.pinnedKeyChanged`).
    public var trustedDevices: [DeviceID: String]
    /// TCP port to accept links on: nil for the default port, falling back to any free port when it is taken;
    /// 0 for any free port; another value for exactly that port (an error when taken).
    public var listenPort: UInt16?
    /// Names of the interfaces discovery runs on; nil for every multicast-capable interface and loopback.
    public var interfaces: [String]?
    /// Whether to discover peers by multicast at all (manual addresses work without it).
    public var discoveryEnabled: Bool
    /// How connection requests are answered.
    public var acceptPolicy: AcceptPolicy
    /// Server and peer modes: requests past this many connected peers are denied with "server full".
    public var maxPeers: Int
    /// A connected peer silent for this long is Disconnected.
    public var disconnectTimeout: Duration
    /// A link whose TLS handshake and hello are not done this long after it opened is closed (reason
    /// `timedOut(.handshake)`): what a stalled stranger can hold a pending slot for.
    public var handshakeTimeout: Duration = .seconds(10)
    /// How often discovery re-announces (with jitter); a peer is Unavailable after three missed announcements.
    public var announceInterval: Duration
    /// Incoming links not (yet) accepted, before or after their hello: beyond this many, the oldest is closed.
    public var maxPendingLinks: Int
    /// Whether a transfer engine runs on this session: the hello announces the `transfers` capability and
    /// transfer frames reach `Session.transferEvents`; without it, a peer that sends one is cut off.
    public var transfersEnabled: Bool
    /// Bytes of transfer frames (headers and payloads) one peer may have handed to `Session.transferEvents` and not
    /// yet taken by the transfer engine: past it, the peer's link is not read until the engine takes some
    /// (`TransferBacklog`). Above what an honest sender keeps unacknowledged (48 MiB over all its transfers).
    public var transferBacklogLimit = 64 << 20
    /// Whether the application reads messages (`send(_:to:mode:)` from its peers). False announces `filesOnly` in
    /// the beacon and the hello, for an application that only transfers files, so that a chat leaves it out
    /// (`PeerInfo.takesMessages` on the other side).
    public var takesMessages = true
    /// Where protocol events are logged (links opened and closed with their reasons, evictions, rejected
    /// beacons); level 1 is the interesting events, level 2 adds every beacon. Nil logs nothing.
    public var log: (@Sendable (_ level: Int, _ message: String) -> Void)?
    /// Incoming links not (yet) accepted from one IP address (an IPv6 /64): a new one beyond this is closed at once,
    /// so that one host cannot push other hosts' handshakes out of `maxPendingLinks`.
    public var maxPendingLinksPerAddress: Int
    /// With `AcceptPolicy.ask`: how many connection requests may reach the application (as
    /// `SessionEvent.connectionRequested`) from everyone together; beyond it requests are denied without an event.
    public var connectionRequestRate: RateLimit
    /// The same for the requests of one device (by its certificate's device ID).
    public var connectionRequestRatePerPeer: RateLimit

    /// GameKit's `initWithSessionID:displayName:sessionMode:`, with this install's `identity` and the knobs at their defaults.
    public init(
        sessionID: String = "ferry", displayName: String, mode: PeerMode = .peer, identity: DeviceIdentity,
        trustedDevices: [DeviceID: String] = [:],
        listenPort: UInt16? = nil, interfaces: [String]? = nil, discoveryEnabled: Bool = true,
        acceptPolicy: AcceptPolicy = .ask, maxPeers: Int = 16, disconnectTimeout: Duration = .seconds(10),
        announceInterval: Duration = .seconds(2), maxPendingLinks: Int = 64, transfersEnabled: Bool = false,
        maxPendingLinksPerAddress: Int = 8, connectionRequestRate: RateLimit = .perMinute(10),
        connectionRequestRatePerPeer: RateLimit = .perMinute(3)
    ) {
        self.transfersEnabled = transfersEnabled
        self.sessionID = sessionID
        self.displayName = displayName
        self.mode = mode
        self.identity = identity
        self.trustedDevices = trustedDevices
        self.listenPort = listenPort
        self.interfaces = interfaces
        self.discoveryEnabled = discoveryEnabled
        self.acceptPolicy = acceptPolicy
        self.maxPeers = maxPeers
        self.disconnectTimeout = disconnectTimeout
        self.announceInterval = announceInterval
        self.maxPendingLinks = maxPendingLinks
        self.maxPendingLinksPerAddress = maxPendingLinksPerAddress
        self.connectionRequestRate = connectionRequestRate
        self.connectionRequestRatePerPeer = connectionRequestRatePerPeer
    }

    /// This install's device ID: the SHA-256 of its certificate.
    public var deviceID: DeviceID { identity.deviceID }
}

/// How a message travels, as GameKit's `GKSendDataMode`.
public enum DataMode: String, Equatable, Sendable {
    /// Ordered; delivered, or the link fails.
    case reliable
    /// One datagram: may be lost or reordered; at most `Limits.maxDatagramPayload` bytes.
    case unreliable
}
