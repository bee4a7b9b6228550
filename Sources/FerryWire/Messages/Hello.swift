/// The first frame each side sends after the preface: who it is and what it can do.
///
/// Until the connection is accepted the receiver caps frames at `Limits.maxHelloPayload` (pre-authentication cap);
/// the peer is known by its hello from then on. Payload (kind 0x0001), at most 1024 bytes:
///
/// ```
/// +-------+-------+----------+--------------+------+--------------+------------+--------------+
/// | major | minor | peerID   | deviceID     | mode | capabilities | listenPort | datagramPort |
/// | u8    | u8    | u64      | 32 bytes     | u8   | u32          | u16        | u16          |
/// +-------+-------+----------+--------------+------+--------------+------------+--------------+
/// | sessionID str8 (1...64)  | displayName str8 (1...64) | pairingCommitment bytes[32] (opt) |
/// +--------------------------+---------------------------+----------------------------------+
/// ```
///
/// The acceptor's hello ends with a commitment to its pairing nonce (SHA-256 of 32 random bytes), revealed in a
/// `pairing` frame only after the initiator sent its own nonce: neither side can choose the pairing code after
/// seeing the other's contribution (PROTOCOL.md 7). Bytes after the commitment are ignored.
///
/// The decoder does not know the sender's role: it reads the first 32 bytes after the display name as
/// `pairingCommitment` whatever the hello. In an acceptor's hello they are its commitment (an acceptor's extension
/// bytes come after it, and the initiator holds it to revealing it); in an initiator's hello they are extension bytes,
/// and the acceptor never looks at `pairingCommitment` (PROTOCOL.md 4.1).
public struct Hello: Equatable, Sendable {
    /// The sender's protocol version (the preface's decides compatibility).
    public var version: ProtocolVersion
    /// The sender's peer ID for this run.
    public var peerID: PeerID
    /// The sender's device ID; the receiver closes the link when it differs from the certificate's (10.8).
    public var deviceID: DeviceID
    /// The sender's session mode.
    public var mode: PeerMode
    /// What the sender supports; a feature is used only when both hellos have it.
    public var capabilities: Capabilities
    /// TCP port the sender accepts links on, 0 = none.
    public var listenPort: UInt16
    /// UDP port the sender receives datagrams on, 0 = none.
    public var datagramPort: UInt16
    /// The session; peers of different sessions do not connect.
    public var sessionID: String
    /// The sender's name for people.
    public var displayName: String
    /// SHA-256 of the sender's pairing nonce: meaningful in an acceptor's hello only (nil: none; see above).
    public var pairingCommitment: [UInt8]?

    /// Length of the pairing commitment and of a pairing nonce.
    public static let pairingFieldLength = 32

    /// A hello with the given fields; `version` defaults to the current one.
    public init(
        version: ProtocolVersion = .current, peerID: PeerID, deviceID: DeviceID, mode: PeerMode,
        capabilities: Capabilities, listenPort: UInt16, datagramPort: UInt16, sessionID: String,
        displayName: String, pairingCommitment: [UInt8]? = nil
    ) {
        self.pairingCommitment = pairingCommitment
        self.version = version
        self.peerID = peerID
        self.deviceID = deviceID
        self.mode = mode
        self.capabilities = capabilities
        self.listenPort = listenPort
        self.datagramPort = datagramPort
        self.sessionID = sessionID
        self.displayName = displayName
    }

    /// Throws `invalidField` when the session ID or display name is empty or longer than 64 UTF-8 bytes.
    public func validate() throws(WireError) {
        try StringField.validate(sessionID, "sessionID", lengths: StringField.sessionIDLengths)
        try StringField.validate(displayName, "displayName", lengths: StringField.displayNameLengths)
    }
}

extension Hello {
    init(payload: ArraySlice<UInt8>) throws(WireError) {
        guard payload.count <= Limits.maxHelloPayload else {
            throw .payloadTooLarge(length: payload.count, limit: Limits.maxHelloPayload)
        }
        var reader = ByteReader(payload, context: "hello")
        version = ProtocolVersion(major: try reader.readUInt8("version"), minor: try reader.readUInt8("version"))
        peerID = PeerID(rawValue: try reader.readUInt64("peerID"))
        deviceID = try reader.readDeviceID("deviceID")
        mode = try reader.readPeerMode("mode")
        capabilities = Capabilities(rawValue: try reader.readUInt32("capabilities"))
        listenPort = try reader.readUInt16("listenPort")
        datagramPort = try reader.readUInt16("datagramPort")
        sessionID = try reader.readString8("sessionID", lengths: StringField.sessionIDLengths)
        displayName = try reader.readString8("displayName", lengths: StringField.displayNameLengths)
        if reader.remainingCount >= Self.pairingFieldLength {
            pairingCommitment = try reader.readBytes(count: Self.pairingFieldLength, "pairingCommitment")
        } else {
            pairingCommitment = nil
        }
        reader.skipRemaining()
    }

    func write(to writer: inout ByteWriter) {
        precondition((try? validate()) != nil, "Hello.validate() must pass before encoding")
        writer.write(version.major)
        writer.write(version.minor)
        writer.write(peerID.rawValue)
        writer.write(bytes: deviceID.bytes)
        writer.write(mode.rawValue)
        writer.write(capabilities.rawValue)
        writer.write(listenPort)
        writer.write(datagramPort)
        writer.write(string8: sessionID)
        writer.write(string8: displayName)
        if let pairingCommitment {
            precondition(pairingCommitment.count == Self.pairingFieldLength, "a pairing commitment is 32 bytes")
            writer.write(bytes: pairingCommitment)
        }
    }
}
