@testable import FerryWire

/// The values the golden fixtures under `Fixtures/wire/` encode (see docs/PROTOCOL.md, "Test vectors").
enum Samples {
    static let peerID = PeerID(rawValue: 0x0123_4567_89ab_cdef)
    static let otherPeerID = PeerID(rawValue: 0xfedc_ba98_7654_3210)
    static let deviceID = DeviceID(bytes: Array(0...31))!
    static let otherDeviceID = DeviceID(bytes: Array(32...63))!
    static let sessionID = "ferry-demo"
    static let displayName = "Zoë's laptop"

    static let hello = Hello(
        peerID: peerID, deviceID: deviceID, mode: .peer, capabilities: [.zlib, .datagrams], listenPort: 41971,
        datagramPort: 41972, sessionID: sessionID, displayName: displayName)

    static var helloExtended: Hello {
        var hello = hello
        hello.version = ProtocolVersion(major: 1, minor: 1)
        return hello
    }

    /// The pairing nonce of the vectors, `40 41 ... 5f`, and its SHA-256, the acceptor's commitment
    /// (`ca2a4fe7...7555fd42`, as Python's hashlib computed it).
    static let pairingNonce: [UInt8] = Array(0x40...0x5f)
    static let pairingCommitment: [UInt8] = [
        0xca, 0x2a, 0x4f, 0xe7, 0x27, 0xfa, 0xae, 0xcf, 0x16, 0xec, 0xd1, 0x30, 0xa8, 0x6e, 0x08, 0x85,
        0xc5, 0x54, 0x0c, 0x05, 0x37, 0x53, 0x40, 0x44, 0x50, 0x71, 0xc0, 0x65, 0x75, 0x55, 0xfd, 0x42,
    ]

    /// The hello as an acceptor sends it: with its commitment after the display name.
    static var helloAcceptor: Hello {
        var hello = hello
        hello.pairingCommitment = pairingCommitment
        return hello
    }

    /// The acceptor's hello from a version 1.1 peer: its extension bytes come after the commitment.
    static var helloAcceptorExtended: Hello {
        var hello = helloAcceptor
        hello.version = ProtocolVersion(major: 1, minor: 1)
        return hello
    }

    static let deny = Deny(reason: .serverFull, detail: "at most 4 peers")
    static let goodbye = Goodbye(reason: .shuttingDown, detail: "bye")
    static let heartbeat = Heartbeat(sequence: 42)
    static let message = Array("hello, ferry".utf8)

    static let datagram = Datagram(
        sessionTag: Datagram.sessionTag(for: sessionID), sender: peerID, sequence: 7,
        sealed: Array("ping".utf8) + Array(0..<16))

    static let beacon = Beacon(
        flags: .available, mode: .peer, peerID: peerID, deviceID: deviceID, tcpPort: 41971, sessionID: sessionID,
        displayName: displayName)

    static let beaconQuery = Beacon(
        flags: .query, mode: .client, peerID: otherPeerID, deviceID: otherDeviceID, tcpPort: 0,
        sessionID: sessionID, displayName: "Bob")

    /// Every frame fixture and the message it decodes to; `encodes` is false where encoding the message
    /// cannot reproduce the fixture (extension bytes, an ignored kind).
    static let frameCases: [FrameCase] = [
        FrameCase(name: "hello", message: .hello(hello)),
        FrameCase(name: "hello-extended", message: .hello(helloExtended), encodes: false),
        FrameCase(name: "hello-acceptor", message: .hello(helloAcceptor)),
        FrameCase(name: "hello-acceptor-extended", message: .hello(helloAcceptorExtended), encodes: false),
        FrameCase(name: "connectionRequest", message: .connectionRequest),
        FrameCase(name: "accept", message: .accept),
        FrameCase(name: "deny", message: .deny(deny)),
        FrameCase(name: "message", message: .message(message)),
        FrameCase(name: "heartbeat", message: .heartbeat(heartbeat)),
        FrameCase(name: "goodbye", message: .goodbye(goodbye)),
        FrameCase(name: "pairing", message: .pairing(pairingNonce)),
        FrameCase(name: "unknown-ignorable", message: .ignored(FrameKind(0x8123)), encodes: false),
    ]
}

/// One golden frame fixture.
struct FrameCase: Sendable, CustomStringConvertible {
    var name: String
    var message: SessionMessage
    var encodes = true

    var description: String { name }

    func bytes() throws -> [UInt8] {
        try Fixtures.bytes(name)
    }
}
