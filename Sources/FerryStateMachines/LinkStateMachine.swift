import FerryWire

/// The life of one reliable link, from the hello to the goodbye.
///
/// Pure value: the driver feeds it received bytes, user decisions and clock ticks, and carries out the actions
/// it returns in order (`.send` bytes on the link, report events, `.close` the link). The transport below it
/// exchanges the preface and runs the TLS handshake; the machine sees only the bytes inside TLS (its handshake
/// deadline still covers the transport's handshake, as the machine starts when the TCP link opens). Both sides
/// send their hello as soon as the link opens (the transport holds it until TLS is up); the initiator then sends a connection request (or, when it
/// only probes a manual address, a goodbye); the acceptor surfaces the request and answers accept or deny.
/// See docs/state-machines/link.md for the diagram.
public struct LinkStateMachine: Sendable {
    /// Which end of the link this is.
    public enum Role: Equatable, Sendable {
        /// We opened the link: to ask for a connection (`.connect`) or only to learn who is there (`.probe`).
        case initiator(Purpose)
        /// The peer opened the link.
        case acceptor
    }

    /// Why an initiator opened the link.
    public enum Purpose: Equatable, Sendable {
        case connect(timeout: Duration)
        case probe
    }

    /// Which deadline passed.
    public enum Timeout: Equatable, Sendable {
        /// No TLS handshake and hello within the handshake time.
        case handshake
        /// The peer did not answer our connection request in time.
        case connectionRequest
        /// The peer sent its hello but never asked for a connection.
        case idle
        /// Nobody decided on the peer's connection request in time; it was denied.
        case decision
        /// Nothing arrived from a connected peer within the disconnect timeout.
        case liveness
    }

    /// Why the link ended.
    public enum CloseReason: Equatable, Sendable {
        /// The peer denied our connection request.
        case denied(Deny)
        /// We denied the peer's connection request.
        case deniedLocally(Deny)
        /// The peer said goodbye.
        case goodbye(Goodbye)
        /// We disconnected.
        case localDisconnect(GoodbyeReason)
        case timedOut(Timeout)
        /// The peer broke the protocol; the text names how.
        case protocolError(String)
        /// The transport could not authenticate the peer (bad preface, failed TLS handshake, a certificate
        /// that does not match the announced device ID) or the TLS connection failed; the text names how.
        case securityFailure(String)
        /// The byte stream ended without a goodbye (peer killed, link lost).
        case streamEnded
        /// A probe learned the peer's hello and ended the link on purpose.
        case probeFinished
    }

    /// What the driver must do.
    public enum Action: Equatable, Sendable {
        case send([UInt8])
        /// The peer's hello arrived: the session now knows who is at the other end.
        case helloReceived(Hello)
        /// Acceptor: the peer asks to connect. Answer with `accept(now:)` or `deny(_:now:)`.
        case connectionRequested
        /// The connection is established; messages may flow.
        case connected
        case messageReceived([UInt8])
        /// A frame of the transfer protocol arrived on the connected link.
        case transferFrameReceived(Frame)
        /// Both pairing nonces are known (the acceptor's checked against its commitment): the driver derives the
        /// pairing code from them and the link's TLS session.
        case pairingAgreed(initiatorNonce: [UInt8], acceptorNonce: [UInt8])
        /// Close the link. Always the last action; later events return nothing.
        case close(CloseReason)
    }

    /// Tunables; the defaults are the documented protocol values.
    public struct Configuration: Sendable {
        /// The hello we send (an acceptor's carries the commitment to `pairingNonce`).
        public var localHello: Hello
        /// From the link's start to the peer's hello (the transport's TLS handshake included): beyond it the link closes.
        public var handshakeTimeout: Duration
        /// Acceptor: how long after the hellos the initiator has to send its request (or goodbye).
        public var idleTimeout: Duration
        /// Acceptor: how long a request may wait for the application's accept or deny; then it is denied.
        public var decisionTimeout: Duration
        /// A connected link silent for this long is lost (`timedOut`).
        public var disconnectTimeout: Duration
        /// Send a heartbeat when nothing was sent for this long. Fixed by the protocol, so that a peer with a
        /// short disconnect timeout is kept alive by a peer with a long one.
        public var heartbeatInterval: Duration
        /// 32 random bytes for the pairing code (nil: no code). An acceptor's `localHello` must carry their SHA-256
        /// as its `pairingCommitment`; the nonce itself is revealed only after the initiator sent its own.
        public var pairingNonce: [UInt8]?

        /// A configuration with the protocol's defaults for what is not given.
        public init(
            localHello: Hello, handshakeTimeout: Duration = .seconds(10), idleTimeout: Duration = .seconds(30),
            decisionTimeout: Duration = .seconds(60), disconnectTimeout: Duration = .seconds(10),
            heartbeatInterval: Duration = .seconds(1), pairingNonce: [UInt8]? = nil
        ) {
            self.pairingNonce = pairingNonce
            self.localHello = localHello
            self.handshakeTimeout = handshakeTimeout
            self.idleTimeout = idleTimeout
            self.decisionTimeout = decisionTimeout
            self.disconnectTimeout = disconnectTimeout
            self.heartbeatInterval = heartbeatInterval
        }
    }

    /// Where the link is in its life.
    public enum State: Equatable, Sendable {
        /// The hello (sent through the transport's TLS handshake) has not arrived yet.
        case awaitingHello
        /// Initiator: our request is out, waiting for accept or deny.
        case requesting
        /// Acceptor: hellos exchanged, waiting for the peer's request.
        case awaitingRequest
        /// Acceptor: the request is with the user or policy.
        case awaitingDecision
        case connected
        case closed
    }

    /// Which end of the link this is.
    public let role: Role
    /// The tunables the machine was made with.
    public let configuration: Configuration
    /// Where the link is now.
    public private(set) var state: State = .awaitingHello
    /// The peer's hello, once received.
    public private(set) var peerHello: Hello?

    private var decoder = FrameDecoder(maximumPayloadLength: Limits.maxHelloPayload)
    private var deadline: ContinuousClock.Instant
    private var lastReceived: ContinuousClock.Instant
    private var lastSent: ContinuousClock.Instant
    private var heartbeatSequence: UInt64 = 0
    /// Acceptor: the initiator's pairing nonce, once its `pairing` frame arrived.
    private var initiatorNonce: [UInt8]?
    /// Initiator: whether the acceptor's nonce arrived (it is revealed once).
    private var pairingRevealed = false
    /// Initiator: our nonce went out in answer to a commitment, so `accept` must come after its reveal.
    private var awaitsReveal = false

    /// A machine for a link that opened `now`; its first actions come from `start(now:)`.
    public init(role: Role, configuration: Configuration, now: ContinuousClock.Instant) {
        self.role = role
        self.configuration = configuration
        self.deadline = now + configuration.handshakeTimeout
        self.lastReceived = now
        self.lastSent = now
    }

    /// The link is open: send our hello.
    public mutating func start(now: ContinuousClock.Instant) -> [Action] {
        lastSent = now
        return [.send(SessionMessage.hello(configuration.localHello).encoded())]
    }

    /// Bytes arrived on the link.
    public mutating func bytesReceived(_ bytes: [UInt8], now: ContinuousClock.Instant) -> [Action] {
        guard state != .closed else { return [] }
        lastReceived = now
        var actions: [Action] = []
        decoder.append(bytes)
        while state != .closed {
            let frame: Frame?
            do {
                frame = try decoder.nextFrame()
            } catch {
                return violated(error.description, now: now, into: &actions)
            }
            guard let frame else { break }
            guard receive(frame, now: now, into: &actions) else { return actions }
        }
        return actions
    }

    /// The largest frame payload the link takes now: `Limits.maxHelloPayload` until the connection is accepted,
    /// then `Limits.maxFramePayload`. It only grows.
    public var maximumPayloadLength: Int { decoder.maximumPayloadLength }

    /// Frames that the driver decoded itself arrived (it reads them in place, with a `FrameDecoder` whose limit is
    /// `maximumPayloadLength` as of its last call here). An empty list says that bytes of a frame still under way
    /// arrived: the link is alive.
    public mutating func framesReceived(_ frames: [Frame], now: ContinuousClock.Instant) -> [Action] {
        guard state != .closed else { return [] }
        lastReceived = now
        var actions: [Action] = []
        for frame in frames {
            guard state != .closed else { break }
            guard frame.payload.count <= maximumPayloadLength else {
                let error = WireError.frameTooLarge(
                    length: UInt32(clamping: frame.payload.count), limit: maximumPayloadLength)
                return violated(error.description, now: now, into: &actions)
            }
            guard receive(frame, now: now, into: &actions) else { return actions }
        }
        return actions
    }

    /// The driver's decoder refused a frame header (`frameTooLarge` against `maximumPayloadLength`).
    public mutating func framingFailed(_ error: WireError, now: ContinuousClock.Instant) -> [Action] {
        guard state != .closed else { return [] }
        lastReceived = now
        var actions: [Action] = []
        return violated(error.description, now: now, into: &actions)
    }

    /// One frame: decoded as a session message and handled; false when it violated the protocol (the link closes).
    private mutating func receive(
        _ frame: Frame, now: ContinuousClock.Instant, into actions: inout [Action]
    ) -> Bool {
        let message: SessionMessage
        do {
            message = try SessionMessage(frame: frame)
        } catch {
            violated(error.description, now: now, into: &actions)
            return false
        }
        handle(message, now: now, into: &actions)
        return true
    }

    /// The byte stream ended or failed.
    public mutating func streamEnded() -> [Action] {
        guard state != .closed else { return [] }
        var actions: [Action] = []
        return close(.streamEnded, into: &actions)
    }

    /// The transport refused the peer or its TLS connection failed (nothing more can be sent on it).
    public mutating func securityFailed(_ detail: String) -> [Action] {
        guard state != .closed else { return [] }
        var actions: [Action] = []
        return close(.securityFailure(detail), into: &actions)
    }

    /// The driver refuses the authenticated peer (its certificate does not match what it announced, or a
    /// pinned name presents another key): a goodbye naming why, then close.
    public mutating func refuse(_ detail: String, now: ContinuousClock.Instant) -> [Action] {
        guard state != .closed else { return [] }
        lastSent = now
        var actions: [Action] = [
            .send(SessionMessage.goodbye(Goodbye(reason: .disconnected, clipping: detail)).encoded())
        ]
        return close(.securityFailure(detail), into: &actions)
    }

    /// Acceptor: the user or policy accepted the peer's request.
    public mutating func accept(now: ContinuousClock.Instant) -> [Action] {
        guard state == .awaitingDecision else { return [] }
        state = .connected
        decoder.maximumPayloadLength = Limits.maxFramePayload
        lastSent = now
        return [.send(SessionMessage.accept.encoded()), .connected]
    }

    /// Acceptor: deny the peer's request (or refuse the link at any point before it is connected).
    public mutating func deny(_ deny: Deny, now: ContinuousClock.Instant) -> [Action] {
        guard state != .closed, state != .connected else { return [] }
        var actions: [Action] = [.send(SessionMessage.deny(deny).encoded())]
        return close(.deniedLocally(deny), into: &actions)
    }

    /// Encode an application message for a connected link; nil when the link is not connected.
    public mutating func message(_ payload: [UInt8], now: ContinuousClock.Instant) -> [UInt8]? {
        guard state == .connected else { return nil }
        lastSent = now
        return SessionMessage.message(payload).encoded()
    }

    /// Note that the driver sent bytes built elsewhere (e.g. by a transfer engine) on this link.
    public mutating func noteSent(now: ContinuousClock.Instant) {
        lastSent = now
    }

    /// End the link with a goodbye.
    public mutating func disconnect(_ reason: GoodbyeReason, detail: String = "", now: ContinuousClock.Instant)
        -> [Action]
    {
        guard state != .closed else { return [] }
        var actions: [Action] = [.send(SessionMessage.goodbye(Goodbye(reason: reason, clipping: detail)).encoded())]
        return close(.localDisconnect(reason), into: &actions)
    }

    /// The clock moved: deadlines and heartbeats.
    public mutating func tick(now: ContinuousClock.Instant) -> [Action] {
        var actions: [Action] = []
        switch state {
        case .closed:
            return []
        case .connected:
            if now - lastReceived > configuration.disconnectTimeout {
                actions.append(.send(SessionMessage.goodbye(Goodbye(reason: .timedOut)).encoded()))
                return close(.timedOut(.liveness), into: &actions)
            }
            if now - lastSent >= configuration.heartbeatInterval {
                heartbeatSequence &+= 1
                lastSent = now
                actions.append(.send(SessionMessage.heartbeat(Heartbeat(sequence: heartbeatSequence)).encoded()))
            }
            return actions
        case .awaitingHello:
            guard now >= deadline else { return [] }
            return close(.timedOut(.handshake), into: &actions)
        case .requesting:
            guard now >= deadline else { return keepAlive(now: now) }
            actions.append(.send(SessionMessage.goodbye(Goodbye(reason: .timedOut)).encoded()))
            return close(.timedOut(.connectionRequest), into: &actions)
        case .awaitingRequest:
            guard now >= deadline else { return keepAlive(now: now) }
            return close(.timedOut(.idle), into: &actions)
        case .awaitingDecision:
            guard now >= deadline else { return keepAlive(now: now) }
            let deny = Deny(reason: .notAccepting, detail: "no answer in time")
            actions.append(.send(SessionMessage.deny(deny).encoded()))
            return close(.timedOut(.decision), into: &actions)
        }
    }

    /// While a request is pending, heartbeats tell the other side we are still here.
    private mutating func keepAlive(now: ContinuousClock.Instant) -> [Action] {
        guard now - lastSent >= configuration.heartbeatInterval else { return [] }
        heartbeatSequence &+= 1
        lastSent = now
        return [.send(SessionMessage.heartbeat(Heartbeat(sequence: heartbeatSequence)).encoded())]
    }

    private mutating func handle(_ message: SessionMessage, now: ContinuousClock.Instant, into actions: inout [Action])
    {
        switch (state, message) {
        case (_, .ignored), (_, .heartbeat):
            // Liveness and frames a newer minor version may add: never an error, also before the hello (PROTOCOL 3.4).
            return
        case (_, .goodbye(let goodbye)):
            _ = close(.goodbye(goodbye), into: &actions)
        case (.awaitingHello, .hello(let hello)):
            helloReceived(hello, now: now, into: &actions)
        case (.requesting, .accept) where awaitsReveal:
            // A commitment not revealed fails the pairing as a wrong reveal does (PROTOCOL 4.8): connecting without a
            // code would let a man in the middle skip the comparison by never revealing.
            violated(
                "it accepted without revealing the pairing nonce of the commitment in its hello", now: now,
                into: &actions)
        case (.requesting, .accept):
            state = .connected
            decoder.maximumPayloadLength = Limits.maxFramePayload
            actions.append(.connected)
        case (.requesting, .deny(let deny)):
            _ = close(.denied(deny), into: &actions)
        case (.awaitingRequest, .pairing(let nonce)) where initiatorNonce == nil && role == .acceptor:
            initiatorNonce = nonce
        case (.awaitingRequest, .connectionRequest):
            state = .awaitingDecision
            deadline = now + configuration.decisionTimeout
            if let initiatorNonce, let acceptorNonce = configuration.pairingNonce {
                lastSent = now
                actions.append(.send(SessionMessage.pairing(acceptorNonce).encoded()))
                actions.append(.pairingAgreed(initiatorNonce: initiatorNonce, acceptorNonce: acceptorNonce))
            }
            actions.append(.connectionRequested)
        case (.requesting, .pairing(let acceptorNonce)) where !pairingRevealed:
            pairingRevealed = true
            awaitsReveal = false
            guard let initiatorNonce = configuration.pairingNonce, let commitment = peerHello?.pairingCommitment,
                SHA256Hasher.digest(acceptorNonce) == commitment
            else {
                violated("its pairing nonce does not match the commitment in its hello", now: now, into: &actions)
                return
            }
            actions.append(.pairingAgreed(initiatorNonce: initiatorNonce, acceptorNonce: acceptorNonce))
        case (.connected, .message(let payload)):
            actions.append(.messageReceived(payload))
        case (.connected, .transfer(let frame)):
            actions.append(.transferFrameReceived(frame))
        case (.closed, _):
            return  // unreachable: frames are decoded only while open
        case (let state, let message):
            violated("unexpected \(message.kindName) while \(state)", now: now, into: &actions)
        }
    }

    private mutating func helloReceived(_ hello: Hello, now: ContinuousClock.Instant, into actions: inout [Action]) {
        let local = configuration.localHello
        peerHello = hello
        if hello.sessionID != local.sessionID {
            let deny = Deny(reason: .sessionMismatch, detail: "this peer is in another session")
            actions.append(.send(SessionMessage.deny(deny).encoded()))
            _ = close(.deniedLocally(deny), into: &actions)
            return
        }
        if hello.peerID == local.peerID {
            violated("the link leads back to this session itself", now: now, into: &actions)
            return
        }
        actions.append(.helloReceived(hello))
        switch role {
        case .initiator(.connect(let timeout)):
            state = .requesting
            deadline = now + timeout
            lastSent = now
            // Our pairing nonce goes out only now, after the acceptor committed to its own in its hello.
            var request: [UInt8] = []
            if let nonce = configuration.pairingNonce, hello.pairingCommitment != nil {
                request += SessionMessage.pairing(nonce).encoded()
                awaitsReveal = true
            }
            request += SessionMessage.connectionRequest.encoded()
            actions.append(.send(request))
        case .initiator(.probe):
            actions.append(.send(SessionMessage.goodbye(Goodbye(reason: .disconnected)).encoded()))
            _ = close(.probeFinished, into: &actions)
        case .acceptor:
            state = .awaitingRequest
            deadline = now + configuration.idleTimeout
        }
    }

    /// The peer broke the protocol: a goodbye (`protocolError`, naming how) so that it learns why, then close
    /// (PROTOCOL 3.5). The machine only sees bytes inside TLS, so the goodbye never travels in the clear.
    @discardableResult
    private mutating func violated(
        _ detail: String, now: ContinuousClock.Instant, into actions: inout [Action]
    ) -> [Action] {
        lastSent = now
        actions.append(.send(SessionMessage.goodbye(Goodbye(reason: .protocolError, clipping: detail)).encoded()))
        return close(.protocolError(detail), into: &actions)
    }

    @discardableResult
    private mutating func close(_ reason: CloseReason, into actions: inout [Action]) -> [Action] {
        state = .closed
        actions.append(.close(reason))
        return actions
    }
}

extension SessionMessage {
    /// The message's kind, for error texts.
    var kindName: String {
        switch self {
        case .hello: "hello"
        case .connectionRequest: "connection request"
        case .accept: "accept"
        case .deny: "deny"
        case .message: "message"
        case .heartbeat: "heartbeat"
        case .goodbye: "goodbye"
        case .pairing: "pairing"
        case .transfer(let frame): "transfer frame \(frame.kind)"
        case .ignored(let kind): "frame \(kind)"
        }
    }
}
