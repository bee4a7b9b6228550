/// A member asks for one chunk: of another member that announced it, or of the sender when no live member can
/// give it.
///
/// A member answers with a `chunk` frame whose transferID field carries the swarm ID, or with `SwarmRefuse`; the
/// sender answers with an ordinary chunk of the requester's transfer. At most `Limits.maxSwarmRequestsInFlight`
/// requests are outstanding from one member to another. Payload (kind 0x010A, on a member link or the sender's
/// link):
///
/// ```
/// +-----------+-----------+------------+--------+--------------------------+
/// | swarmID   | fileIndex | chunkIndex | codecs | trailing bytes (ignored) |
/// | bytes[16] | u32       | u32        | u8     |                          |
/// +-----------+-----------+------------+--------+--------------------------+
/// ```
///
/// `codecs` is the requester's codec set (11.2): the answering member uses `none` or one of them (members do not
/// see each other's offer replies, so the request says what the requester inflates).
public struct SwarmRequest: Equatable, Sendable {
    /// The swarm.
    public var swarmID: SwarmID
    /// The file's index in the offer's list.
    public var fileIndex: UInt32
    /// The chunk: the one at offset `chunkIndex x chunkSize`.
    public var chunkIndex: UInt32
    /// Codecs the requester inflates.
    public var codecs: CodecSet

    /// A request for chunk `chunkIndex` of file `fileIndex`.
    public init(swarmID: SwarmID, fileIndex: UInt32, chunkIndex: UInt32, codecs: CodecSet) {
        self.swarmID = swarmID
        self.fileIndex = fileIndex
        self.chunkIndex = chunkIndex
        self.codecs = codecs
    }
}

extension SwarmRequest {
    init(payload: ArraySlice<UInt8>) throws(WireError) {
        var reader = ByteReader(payload, context: "swarmRequest")
        swarmID = try reader.readSwarmID("swarmID")
        fileIndex = try reader.readUInt32("fileIndex")
        chunkIndex = try reader.readUInt32("chunkIndex")
        codecs = CodecSet(rawValue: try reader.readUInt8("codecs"))
        reader.skipRemaining()
    }

    func write(to writer: inout ByteWriter) {
        writer.write(swarmID)
        writer.write(fileIndex)
        writer.write(chunkIndex)
        writer.write(codecs.rawValue)
    }
}
