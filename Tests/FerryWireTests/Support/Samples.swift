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
        FrameCase(name: "connectionRequest", message: .connectionRequest),
        FrameCase(name: "accept", message: .accept),
        FrameCase(name: "deny", message: .deny(deny)),
        FrameCase(name: "message", message: .message(message)),
        FrameCase(name: "heartbeat", message: .heartbeat(heartbeat)),
        FrameCase(name: "goodbye", message: .goodbye(goodbye)),
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
