/// The receiver's outcome for one file: published (under which name) or why not.
///
/// Lets the sending user see per peer and per file what happened, including the numbered name a receiver
/// chose when the offered one existed. Payload (kind 0x0105):
///
/// ```
/// +------------+-----------+--------+-----------------------+------------------+--------------------------+
/// | transferID | fileIndex | status | detail str8 (0...255) | flags (optional) | trailing bytes (ignored) |
/// | bytes[16]  | u32       | u8     | u8 length + UTF-8     | u8               |                          |
/// +------------+-----------+--------+-----------------------+------------------+--------------------------+
/// ```
///
/// `flags` is sent only when one is set (a peer that knows no flags sees trailing bytes it ignores); bit 0 is
/// `identical`. The other bits are an open set: carried as received (and sent again unchanged by a relay that
/// re-encodes), never interpreted.
public struct FileResult: Equatable, Sendable {
    /// The transfer the file belongs to.
    public var transferID: TransferID
    /// The file's index in the offer's list.
    public var fileIndex: UInt32
    /// How the file ended on the receiver's side.
    public var status: FileStatus
    /// With `.published`: the published relative name; otherwise free text for a human, may be empty.
    public var detail: String
    /// The flags byte as received (0 when absent); bits other than `identicalFlag` are preserved, not interpreted.
    public var flags: UInt8

    /// With `.published`: the receiver already held a file with exactly these bytes under `detail`, and dropped
    /// its copy instead of publishing "name (1)" beside it (flags bit 0).
    public var identical: Bool {
        get { flags & Self.identicalFlag != 0 }
        set { flags = newValue ? flags | Self.identicalFlag : flags & ~Self.identicalFlag }
    }

    /// A result with the given fields; `flags` defaults from `identical`.
    public init(
        transferID: TransferID, fileIndex: UInt32, status: FileStatus, detail: String = "", identical: Bool = false
    ) {
        self.transferID = transferID
        self.fileIndex = fileIndex
        self.status = status
        self.detail = detail
        self.flags = identical ? Self.identicalFlag : 0
    }

    static let identicalFlag: UInt8 = 0x01

    /// Throws `invalidField` when the detail is longer than 255 UTF-8 bytes.
    public func validate() throws(WireError) {
        try StringField.validate(detail, "detail", lengths: StringField.detailLengths)
    }
}

extension FileResult {
    init(payload: ArraySlice<UInt8>) throws(WireError) {
        var reader = ByteReader(payload, context: "fileResult")
        transferID = try reader.readTransferID("transferID")
        fileIndex = try reader.readUInt32("fileIndex")
        status = FileStatus(rawValue: try reader.readUInt8("status"))
        detail = try reader.readString8("detail", lengths: StringField.detailLengths)
        flags = reader.remainingCount > 0 ? try reader.readUInt8("flags") : 0
        reader.skipRemaining()
    }

    func write(to writer: inout ByteWriter) {
        precondition((try? validate()) != nil, "FileResult.validate() must pass before encoding")
        writer.write(transferID)
        writer.write(fileIndex)
        writer.write(status.rawValue)
        writer.write(string8: detail)
        if flags != 0 { writer.write(flags) }
    }
}
