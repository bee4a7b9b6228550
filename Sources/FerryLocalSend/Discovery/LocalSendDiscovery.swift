import FerryHTTPClient
import FerrySecurity
import FerryStateMachines
import FerrySystem
import FerryWire

/// LocalSend discovery (docs/LOCALSEND.md, "Discovery"): ferry's device on LocalSend's multicast group, and the
/// LocalSend devices around, in a `LocalSendDeviceTable`.
///
/// The driver of the pure table: a UDP socket bound to port 53317 (shared through SO_REUSEADDR, as the apps and
/// localsendd bind it) and joined to 224.0.0.167 on every up interface with IPv4 and multicast; it multicasts our
/// device info with `announce: true` when it starts and as the table schedules, and answers an announcement as
/// the protocol says: `POST /api/localsend/v2/register` with our info to the device's HTTPS server, its
/// certificate pinned to the announced fingerprint (`HTTPSClient`), and when that fails our info multicast with
/// `announce: false`. The HTTPS server hands the `register` requests it receives to `registerReceived`.
public actor LocalSendDiscovery {
    /// LocalSend's multicast group and port.
    public static let multicastGroup = "224.0.0.167"
    /// LocalSend's port, for multicast and (by default) for the HTTPS server.
    public static let port: UInt16 = 53317

    /// What this device says of itself.
    public struct Configuration: Sendable {
        /// Our alias (ferry's display name).
        public var alias: String
        /// The port our HTTPS server listens on (announced as `port`).
        public var serverPort: UInt16
        /// `deviceModel`, shown by the apps under the alias.
        public var deviceModel: String
        /// `deviceType`: "desktop" for an interactive run, "headless" for a service.
        public var deviceType: String
        /// The protocol version announced.
        public var version: String
        /// Interfaces to join the group on (nil: every up interface with IPv4 that does multicast).
        public var interfaces: [String]?
        /// The table's tunables other than our own hash (filled in from the identity).
        public var capacity: Int
        /// The whole device object to announce instead of the fields above (the HTTPS server's
        /// `LocalSendServerConfiguration.device`, so that announcements, `register` answers and `/info` agree); its
        /// fingerprint is replaced by the identity's.
        public var device: LocalSendDevice?

        /// Our device as the apps will list it.
        public init(
            alias: String, serverPort: UInt16 = LocalSendDiscovery.port, deviceModel: String = "ferry",
            deviceType: String = "desktop", version: String = "2.1", interfaces: [String]? = nil, capacity: Int = 256
        ) {
            self.alias = alias
            self.serverPort = serverPort
            self.deviceModel = deviceModel
            self.deviceType = deviceType
            self.version = version
            self.interfaces = interfaces
            self.capacity = capacity
        }
    }

    /// What discovery reports.
    public enum Event: Sendable, Equatable {
        /// A device was listed (or listed again after it expired).
        case found(LocalSendDeviceTable<SocketAddress>.Record)
        /// A listed device changed.
        case updated(LocalSendDeviceTable<SocketAddress>.Record)
        /// A device went silent.
        case lost(LocalSendDeviceTable<SocketAddress>.Record)
    }

    /// Why discovery could not start; one line for a person.
    public struct Unavailable: Error, CustomStringConvertible, Sendable {
        /// The line.
        public let description: String
        /// True when no interface qualifies (none up with IPv4 and multicast, or only loopback was named).
        public var noInterface = false
    }

    /// Our device info as it goes out (without `announce`).
    public nonisolated let ownDevice: LocalSendDevice
    /// The events, in order; finished by `stop()`.
    public nonisolated let events: AsyncStream<Event>
    private let continuation: AsyncStream<Event>.Continuation
    private let reactor: Reactor
    private let client: HTTPSClient
    private let socket: UDPSocket
    private let joined: [IPv4Address]
    private var table: LocalSendDeviceTable<SocketAddress>
    private var tasks: [Task<Void, Never>] = []
    /// Answers in flight (at most the table's answer rate times the request timeout), cancelled by `stop()`.
    private var answering: [Int: Task<Void, Never>] = [:]
    private var answerCount = 0
    private var stopped = false
    /// Registers we answered and answers we sent, for diagnostics and tests.
    public private(set) var statistics = Statistics()

    /// Counters.
    public struct Statistics: Sendable, Equatable {
        /// Datagrams that were not a LocalSend device object.
        public var datagramsRejected = 0
        /// `register` requests refused (fingerprint not the certificate's hash).
        public var registersRefused = 0
        /// Answers sent by `register` over HTTPS.
        public var registersSent = 0
        /// Answers that fell back to a multicast `announce: false`.
        public var fallbackAnswers = 0
    }

    /// Binds the port and joins the group; `start()` begins announcing and listening.
    /// - Throws: `Unavailable` with one line: the port is held by a program that does not share it (a LocalSend
    ///   app on this machine), or no interface could join the group.
    public init(configuration: Configuration, identity: LocalSendIdentity, reactor: Reactor) throws(Unavailable) {
        var own =
            configuration.device
            ?? LocalSendDevice(
                alias: configuration.alias, version: configuration.version, deviceModel: configuration.deviceModel,
                deviceType: configuration.deviceType, port: Int(configuration.serverPort), scheme: "https",
                download: false)
        own.fingerprint = identity.fingerprint.description
        own.announce = nil
        ownDevice = own
        self.reactor = reactor
        client = HTTPSClient(identity: identity)
        table = LocalSendDeviceTable(
            configuration: .init(ownCertificateHash: identity.fingerprint.deviceID, capacity: configuration.capacity))
        (events, continuation) = AsyncStream.makeStream(of: Event.self, bufferingPolicy: .bufferingNewest(1024))
        let interfaces: [NetworkInterface]
        do {
            interfaces = try NetworkInterface.all().filter { interface in
                // Never loopback: LocalSend devices are on the LAN, and ferry's own tests run on loopback.
                guard interface.isUp, interface.ipv4 != nil, interface.supportsMulticast, !interface.isLoopback
                else { return false }
                return configuration.interfaces?.contains(interface.name) ?? true
            }
        } catch {
            throw Unavailable(description: "LocalSend discovery is off: cannot list network interfaces: \(error)")
        }
        guard let group = IPv4Address(Self.multicastGroup) else {
            throw Unavailable(description: "LocalSend discovery is off: bad group address")
        }
        let socket: UDPSocket
        do {
            socket = try reactor.openUDP(bindingTo: .ipv4(.any, port: Self.port), reuseAddress: true)
        } catch {
            throw Unavailable(
                description: "LocalSend discovery is off: UDP port \(Self.port) is taken (a LocalSend app on this"
                    + " machine?): \(error)")
        }
        var joined: [IPv4Address] = []
        for interface in interfaces {
            guard let address = interface.ipv4, !joined.contains(address) else { continue }
            if (try? socket.joinMulticast(group: group, interface: address)) != nil { joined.append(address) }
        }
        guard !joined.isEmpty else {
            socket.close()
            throw Unavailable(
                description: "LocalSend discovery is off: no interface (up, IPv4, multicast, not loopback) could join"
                    + " \(Self.multicastGroup)", noInterface: true)
        }
        try? socket.setMulticastLoop(true)  // our own comes back and is dropped by fingerprint; others on this host
        try? socket.setMulticastTTL(1)
        self.socket = socket
        self.joined = joined
    }

    /// Starts announcing and listening.
    public func start() {
        guard tasks.isEmpty, !stopped else { return }
        let reactor = self.reactor
        let socket = self.socket
        tasks.append(
            Task { [weak self] in
                while let (bytes, from) = try? await socket.receive(maxBytes: LocalSendLimits.maxDeviceBodyBytes) {
                    await self?.datagramArrived(bytes, from: from)
                }
            })
        tasks.append(
            Task { [weak self] in
                guard let first = await self?.begin() else { return }
                var deadline = first
                while !Task.isCancelled {
                    do { try await reactor.sleep(until: deadline) } catch { return }
                    guard let next = await self?.tick() else { return }
                    deadline = next
                }
            })
    }

    /// Stops: no more announcements or answers; the socket is closed and `events` ends.
    public func stop() {
        guard !stopped else { return }
        stopped = true
        for task in tasks + answering.values { task.cancel() }
        tasks = []
        answering = [:]
        socket.close()
        continuation.finish()
    }

    /// The devices listed now, by key (upper-case fingerprint).
    public var devices: [String: LocalSendDeviceTable<SocketAddress>.Record] { table.records }

    /// The HTTPS server's `register` hook, for a body the server decoded: `clientCertificate` is the fingerprint of
    /// the client certificate the handshake showed (nil when none), `address` the peer's IP address as text (an IPv4
    /// address, or IPv4-mapped IPv6 as a dual-stack socket reports it; the device's `port` is taken as its
    /// server's). Returns our device info to answer with 200, or the refusal's reason to answer with 400 (a
    /// fingerprint that is not the client certificate's hash, no usable address).
    public func registerReceived(
        device: LocalSendDevice, clientCertificate: LocalSendFingerprint?, address: String
    ) -> Result<LocalSendDevice, RegisterRefusal> {
        let host = address.hasPrefix("::ffff:") ? String(address.dropFirst("::ffff:".count)) : address
        let port = UInt16(clamping: device.port ?? Int(Self.port))
        let socketAddress: SocketAddress
        if let ipv4 = IPv4Address(host) {
            socketAddress = .ipv4(ipv4, port: port)
        } else if let ipv6 = IPv6Address(host) {
            socketAddress = .ipv6(ipv6, port: port, scopeID: 0)
        } else {
            statistics.registersRefused += 1
            return .failure(RegisterRefusal(description: "no usable peer address \(address)"))
        }
        switch table.registerReceived(
            device, clientCertificate: clientCertificate?.deviceID, from: socketAddress, now: .now)
        {
        case .recorded(let actions):
            perform(actions)
            return .success(ownDevice)
        case .refused(let reason):
            statistics.registersRefused += 1
            return .failure(RegisterRefusal(description: reason))
        }
    }

    /// Why a register was refused.
    public struct RegisterRefusal: Error, CustomStringConvertible, Sendable, Equatable {
        /// For the log and the 400 body.
        public let description: String
    }

    private func begin() -> ContinuousClock.Instant? {
        guard !stopped else { return nil }
        perform(table.started(now: .now))
        return nextDeadline()
    }

    private func tick() -> ContinuousClock.Instant? {
        guard !stopped else { return nil }
        perform(table.tick(now: .now))
        return nextDeadline()
    }

    private func nextDeadline() -> ContinuousClock.Instant {
        // At least once a minute, so that expiry never waits on a deadline computed before a device arrived.
        min(table.nextDeadline ?? .now + .seconds(60), .now + .seconds(60))
    }

    private func datagramArrived(_ bytes: [UInt8], from address: SocketAddress) {
        guard !stopped else { return }
        let device: LocalSendDevice
        do {
            device = try LocalSendDevice(json: bytes[...])
        } catch {
            statistics.datagramsRejected += 1
            return
        }
        perform(table.announcementReceived(device, from: address, now: .now))
    }

    private func perform(_ actions: [LocalSendDeviceTable<SocketAddress>.Action]) {
        for action in actions {
            switch action {
            case .deviceFound(let record): continuation.yield(.found(record))
            case .deviceUpdated(let record): continuation.yield(.updated(record))
            case .deviceLost(let record): continuation.yield(.lost(record))
            case .announce: multicast(announce: true)
            case .answer(let record): answer(record)
            }
        }
    }

    private func multicast(announce: Bool) {
        guard !stopped, let group = IPv4Address(Self.multicastGroup) else { return }
        var device = ownDevice
        device.announce = announce
        let bytes = device.encoded()
        for interface in joined {
            do {
                try socket.setMulticastInterface(interface)
                try socket.send(bytes, to: .ipv4(group, port: Self.port))
            } catch {
                continue  // an interface that went down: the others still hear us
            }
        }
    }

    /// Registers with the device over HTTPS (pinned); on failure, the multicast fallback.
    private func answer(_ record: LocalSendDeviceTable<SocketAddress>.Record) {
        guard let hash = record.certificateHash else { return }
        let url = "https://\(record.address.withPort(record.port))/api/localsend/v2/register"
        let body = ownDevice.encoded()
        let client = self.client
        answerCount += 1
        let id = answerCount
        answering[id] = Task { [weak self] in
            do {
                let response = try await client.postJSON(
                    to: url, pinned: LocalSendFingerprint(deviceID: hash), json: body, timeout: .seconds(5))
                let answered = try? LocalSendDevice(json: response.body[...])
                await self?.registered(answered, by: record, id: id)
            } catch {
                await self?.registerFailed(id: id)
            }
        }
    }

    private func registered(
        _ device: LocalSendDevice?, by record: LocalSendDeviceTable<SocketAddress>.Record, id: Int
    ) {
        answering.removeValue(forKey: id)
        guard !stopped else { return }
        statistics.registersSent += 1
        if let device { perform(table.registerAnswered(device, by: record, now: .now)) }
    }

    private func registerFailed(id: Int) {
        answering.removeValue(forKey: id)
        guard !stopped else { return }
        statistics.fallbackAnswers += 1
        multicast(announce: false)
    }
}
