/// The receiver's answer to one chunk: stored, or corrupt and to be sent again.
///
/// Acknowledgements drive the sender's window (flow control) and its go-back-N resend after a corrupt chunk.
/// Payload (kind 0x0103):
///
/// ```
/// +------------+-----------+--------+--------+--------------------------+
/// | transferID | fileIndex | offset | status | trailing bytes (ignored) |
/// | bytes[16]  | u32       | u64    | u8     |                          |
/// +------------+-----------+--------+--------+--------------------------+
/// ```
public struct ChunkAck: Equatable, Sendable {
    /// The transfer the chunk belongs to.
    public var transferID: TransferID
    /// The file's index in the offer's list.
    public var fileIndex: UInt32
    /// The acknowledged chunk's offset.
    public var offset: UInt64
    /// Stored, or corrupt (send it again).
    public var status: ChunkStatus

    /// The answer to the chunk at `offset` of file `fileIndex`.
    public init(transferID: TransferID, fileIndex: UInt32, offset: UInt64, status: ChunkStatus) {
        self.transferID = transferID
        self.fileIndex = fileIndex
        self.offset = offset
        self.status = status
    }
}

extension ChunkAck {
    init(payload: ArraySlice<UInt8>) throws(WireError) {
        var reader = ByteReader(payload, context: "chunkAck")
        transferID = try reader.readTransferID("transferID")
        fileIndex = try reader.readUInt32("fileIndex")
        offset = try reader.readUInt64("offset")
        status = ChunkStatus(rawValue: try reader.readUInt8("status"))
        reader.skipRemaining()
    }

    func write(to writer: inout ByteWriter) {
        writer.write(transferID)
        writer.write(fileIndex)
        writer.write(offset)
        writer.write(status.rawValue)
    }
}
