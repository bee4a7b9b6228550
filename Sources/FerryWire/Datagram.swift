import CZlib

/// One unreliable message, sent as a single UDP packet.
///
/// UDP gives no link, so every packet names its session (a CRC-32 tag of the session ID, to drop strays
/// cheaply) and its sender; the sequence number lets a receiver drop duplicates and stale packets. The payload
/// is capped so a packet fits a 1280-byte IPv6 minimum MTU without fragmentation.
///
/// ```
///  0    1    2       3       4            8                16          20
/// +----+----+-------+-------+------------+----------------+-----------+----------------------+
/// | 46 | 44 |version| flags | sessionTag | sender peerID  | sequence  | payload (0...1200)   |
/// | "F"| "D"| u8 =1 | u8 =0 | u32        | u64            | u32       |                      |
/// +----+----+-------+-------+------------+----------------+-----------+----------------------+
/// ```
public struct Datagram: Equatable, Sendable {
    /// Length of the fixed header.
    public static let headerLength = 20
    /// The only datagram version defined.
    public static let version: UInt8 = 1
    static let magic: [UInt8] = [0x46, 0x44]

    /// `sessionTag(for:)` of the sender's session ID.
    public var sessionTag: UInt32
    public var sender: PeerID
    public var sequence: UInt32
    public var payload: [UInt8]

    public init(sessionTag: UInt32, sender: PeerID, sequence: UInt32, payload: [UInt8]) {
        self.sessionTag = sessionTag
        self.sender = sender
        self.sequence = sequence
        self.payload = payload
    }

    /// CRC-32 (zlib `crc32`, the ISO-HDLC / IEEE polynomial) of the UTF-8 bytes of `sessionID`.
    public static func sessionTag(for sessionID: String) -> UInt32 {
        let bytes = Array(sessionID.utf8)
        let crc = bytes.withUnsafeBufferPointer { buffer in
            crc32(0, buffer.baseAddress, uInt(buffer.count))
        }
        return UInt32(truncatingIfNeeded: crc)
    }

    /// Header and payload; throws `payloadTooLarge` above `Limits.maxDatagramPayload`.
    public func encoded() throws(WireError) -> [UInt8] {
        guard payload.count <= Limits.maxDatagramPayload else {
            throw .payloadTooLarge(length: payload.count, limit: Limits.maxDatagramPayload)
        }
        var writer = ByteWriter(reservingCapacity: Self.headerLength + payload.count)
        writer.write(bytes: Self.magic)
        writer.write(Self.version)
        writer.write(UInt8(0))
        writer.write(sessionTag)
        writer.write(sender.rawValue)
        writer.write(sequence)
        writer.write(bytes: payload)
        return writer.bytes
    }

    /// Decodes one whole packet. Throws `badMagic`, `unsupportedVersion(major: version, minor: 0)`,
    /// `malformed` for a packet shorter than the header and `payloadTooLarge` above 1200 payload bytes.
    /// Flags are reserved: sent as 0, ignored on receipt.
    public init(decoding bytes: ArraySlice<UInt8>) throws(WireError) {
        var reader = ByteReader(bytes, context: "datagram")
        try reader.readMagic(Self.magic)
        let version = try reader.readUInt8("version")
        guard version == Self.version else { throw .unsupportedVersion(major: version, minor: 0) }
        _ = try reader.readUInt8("flags")
        sessionTag = try reader.readUInt32("sessionTag")
        sender = PeerID(rawValue: try reader.readUInt64("sender"))
        sequence = try reader.readUInt32("sequence")
        guard reader.remainingCount <= Limits.maxDatagramPayload else {
            throw .payloadTooLarge(length: reader.remainingCount, limit: Limits.maxDatagramPayload)
        }
        payload = reader.readRemaining()
    }
}
