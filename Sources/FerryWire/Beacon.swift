/// A LAN discovery announcement, sent by UDP multicast to `Discovery.multicastGroup`:`Discovery.port`.
///
/// Peers learn who is around (and in which session) from beacons alone, before any link exists; a beacon
/// carries just enough to show the peer and connect to it. Whole packet at most 512 bytes:
///
/// ```
///  0    1    2    3    4       5     6    7         8        16         48        50
/// +----+----+----+----+-------+-----+----+---------+--------+----------+---------+
/// | 46 | 52 | 59 | 42 |version|flags|mode|reserved | peerID | deviceID | tcpPort |
/// | "F"| "R"| "Y"| "B"| u8 =1 | u8  | u8 | u8 = 0  | u64    | 32 bytes | u16     |
/// +----+----+----+----+-------+-----+----+---------+--------+----------+---------+
/// | sessionID str8 (1...64) | displayName str8 (1...64) | extension bytes (ignored) |
/// +-------------------------+---------------------------+---------------------------+
/// ```
public struct Beacon: Equatable, Sendable {
    /// The only beacon version defined.
    public static let currentVersion: UInt8 = 1
    static let magic: [UInt8] = [0x46, 0x52, 0x59, 0x42]

    /// The beacon format's version (1); others are dropped on receipt.
    public var version: UInt8 = Beacon.currentVersion
    /// Query, available, leaving, files only.
    public var flags: BeaconFlags
    /// The sender's session mode, as in its hello.
    public var mode: PeerMode
    /// The sender's peer ID for this run.
    public var peerID: PeerID
    /// The sender's device ID (not authenticated here: beacons never change who a peer is).
    public var deviceID: DeviceID
    /// TCP port the sender accepts links on.
    public var tcpPort: UInt16
    /// The session; receivers drop beacons of other sessions.
    public var sessionID: String
    /// The sender's display name.
    public var displayName: String

    /// A beacon with the given fields, of the current version.
    public init(
        flags: BeaconFlags, mode: PeerMode, peerID: PeerID, deviceID: DeviceID, tcpPort: UInt16,
        sessionID: String, displayName: String
    ) {
        self.flags = flags
        self.mode = mode
        self.peerID = peerID
        self.deviceID = deviceID
        self.tcpPort = tcpPort
        self.sessionID = sessionID
        self.displayName = displayName
    }

    /// Throws `invalidField` when the session ID or display name is empty or longer than 64 UTF-8 bytes.
    public func validate() throws(WireError) {
        try StringField.validate(sessionID, "sessionID", lengths: StringField.sessionIDLengths)
        try StringField.validate(displayName, "displayName", lengths: StringField.displayNameLengths)
    }

    /// The packet. Precondition: `validate()` passes (the result is then at most 180 bytes).
    public func encoded() -> [UInt8] {
        precondition((try? validate()) != nil, "Beacon.validate() must pass before encoding")
        var writer = ByteWriter(reservingCapacity: 64)
        writer.write(bytes: Self.magic)
        writer.write(version)
        writer.write(flags.rawValue)
        writer.write(mode.rawValue)
        writer.write(UInt8(0))
        writer.write(peerID.rawValue)
        writer.write(bytes: deviceID.bytes)
        writer.write(tcpPort)
        writer.write(string8: sessionID)
        writer.write(string8: displayName)
        return writer.bytes
    }

    /// Decodes one whole packet. Throws `payloadTooLarge` above 512 bytes, `badMagic`,
    /// `unsupportedVersion(major: version, minor: 0)` for a version other than 1, `malformed` when
    /// truncated and `invalidField` for a bad mode or string. The reserved byte and extension bytes are ignored.
    public init(decoding bytes: ArraySlice<UInt8>) throws(WireError) {
        guard bytes.count <= Limits.maxBeaconLength else {
            throw .payloadTooLarge(length: bytes.count, limit: Limits.maxBeaconLength)
        }
        var reader = ByteReader(bytes, context: "beacon")
        try reader.readMagic(Self.magic)
        version = try reader.readUInt8("version")
        guard version == Self.currentVersion else { throw .unsupportedVersion(major: version, minor: 0) }
        flags = BeaconFlags(rawValue: try reader.readUInt8("flags"))
        mode = try reader.readPeerMode("mode")
        _ = try reader.readUInt8("reserved")
        peerID = PeerID(rawValue: try reader.readUInt64("peerID"))
        deviceID = try reader.readDeviceID("deviceID")
        tcpPort = try reader.readUInt16("tcpPort")
        sessionID = try reader.readString8("sessionID", lengths: StringField.sessionIDLengths)
        displayName = try reader.readString8("displayName", lengths: StringField.displayNameLengths)
        reader.skipRemaining()
    }
}
