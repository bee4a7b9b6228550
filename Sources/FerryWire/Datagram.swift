import CZlib

/// One unreliable message, sent as a single UDP packet, sealed with the link's datagram key.
///
/// UDP gives no link, so every packet names its session (a CRC-32 tag of the session ID, to drop strays
/// cheaply) and its sender. The payload travels sealed (AES-256-GCM with a key exported from the sender's TLS
/// link to the receiver, see PROTOCOL.md section 7); the 24-byte header is the AEAD's associated data, so a
/// changed header fails authentication like a changed payload. The sequence number is the nonce and feeds the
/// receiver's replay window. The plaintext is capped so a packet fits a 1280-byte MTU over IPv4 without
/// fragmentation (`Limits.maxDatagramPayload`).
///
/// ```
///  0    1    2       3       4            8                16                24
/// +----+----+-------+-------+------------+----------------+-----------------+--------------------------------+
/// | 46 | 44 |version| flags | sessionTag | sender peerID  | sequence        | sealed payload (16...1216)     |
/// | "F"| "D"| u8 =2 | u8 =0 | u32        | u64            | u64 (>= 1)      | ciphertext + 16-byte GCM tag   |
/// +----+----+-------+-------+------------+----------------+-----------------+--------------------------------+
/// ```
public struct Datagram: Equatable, Sendable {
    /// Length of the fixed header.
    public static let headerLength = 24
    /// Length of the AEAD tag at the end of the sealed payload.
    public static let tagLength = 16
    /// Largest sealed payload: the plaintext limit plus the tag.
    public static let maxSealedLength = Limits.maxDatagramPayload + tagLength
    /// The only datagram version defined (1 was the unsealed datagram of protocol 1.0).
    public static let version: UInt8 = 2
    static let magic: [UInt8] = [0x46, 0x44]

    /// `sessionTag(for:)` of the sender's session ID.
    public var sessionTag: UInt32
    /// The sender's peer ID (authenticated with the rest of the header by the AEAD).
    public var sender: PeerID
    /// Per link and direction, starting at 1, never repeated: the AEAD nonce.
    public var sequence: UInt64
    /// Ciphertext followed by the tag.
    public var sealed: [UInt8]

    /// A datagram with the given header fields and sealed payload.
    public init(sessionTag: UInt32, sender: PeerID, sequence: UInt64, sealed: [UInt8]) {
        self.sessionTag = sessionTag
        self.sender = sender
        self.sequence = sequence
        self.sealed = sealed
    }

    /// CRC-32 (zlib `crc32`, the ISO-HDLC / IEEE polynomial) of the UTF-8 bytes of `sessionID`.
    public static func sessionTag(for sessionID: String) -> UInt32 {
        let bytes = Array(sessionID.utf8)
        let crc = bytes.withUnsafeBufferPointer { buffer in
            crc32(0, buffer.baseAddress, uInt(buffer.count))
        }
        return UInt32(truncatingIfNeeded: crc)
    }

    /// The 24-byte header: what the AEAD authenticates besides the payload.
    public static func header(sessionTag: UInt32, sender: PeerID, sequence: UInt64) -> [UInt8] {
        var writer = ByteWriter(reservingCapacity: headerLength)
        writer.write(bytes: magic)
        writer.write(version)
        writer.write(UInt8(0))
        writer.write(sessionTag)
        writer.write(sender.rawValue)
        writer.write(sequence)
        return writer.bytes
    }

    /// This datagram's header (flags as sent: 0).
    public var header: [UInt8] { Self.header(sessionTag: sessionTag, sender: sender, sequence: sequence) }

    /// Header and sealed payload; throws `payloadTooLarge` above `maxSealedLength`, `malformed` below the tag.
    public func encoded() throws(WireError) -> [UInt8] {
        guard sealed.count <= Self.maxSealedLength else {
            throw .payloadTooLarge(length: sealed.count, limit: Self.maxSealedLength)
        }
        guard sealed.count >= Self.tagLength else { throw .malformed("datagram: sealed payload shorter than its tag") }
        return header + sealed
    }

    /// Decodes one whole packet. Throws `badMagic`, `unsupportedVersion(major: version, minor: 0)`,
    /// `malformed` for a packet shorter than header and tag, and `payloadTooLarge` above `maxSealedLength`
    /// sealed bytes. Flags are reserved: sent as 0, otherwise ignored (the receiver authenticates the header
    /// bytes as received, so a changed flag fails authentication).
    public init(decoding bytes: ArraySlice<UInt8>) throws(WireError) {
        var reader = ByteReader(bytes, context: "datagram")
        try reader.readMagic(Self.magic)
        let version = try reader.readUInt8("version")
        guard version == Self.version else { throw .unsupportedVersion(major: version, minor: 0) }
        _ = try reader.readUInt8("flags")
        sessionTag = try reader.readUInt32("sessionTag")
        sender = PeerID(rawValue: try reader.readUInt64("sender"))
        sequence = try reader.readUInt64("sequence")
        guard reader.remainingCount <= Self.maxSealedLength else {
            throw .payloadTooLarge(length: reader.remainingCount, limit: Self.maxSealedLength)
        }
        guard reader.remainingCount >= Self.tagLength else {
            throw .malformed("datagram: sealed payload shorter than its tag")
        }
        sealed = reader.readRemaining()
    }
}
