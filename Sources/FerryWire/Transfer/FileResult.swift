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
/// `identical`, the other bits are ignored.
public struct FileResult: Equatable, Sendable {
    public var transferID: TransferID
    public var fileIndex: UInt32
    public var status: FileStatus
    /// With `.published`: the published relative name; otherwise free text for a human, may be empty.
    public var detail: String
    /// With `.published`: the receiver already held a file with exactly these bytes under `detail`, and dropped
    /// its copy instead of publishing "name (1)" beside it (flags bit 0).
    public var identical: Bool

    public init(
        transferID: TransferID, fileIndex: UInt32, status: FileStatus, detail: String = "", identical: Bool = false
    ) {
        self.transferID = transferID
        self.fileIndex = fileIndex
        self.status = status
        self.detail = detail
        self.identical = identical
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
        if reader.remainingCount > 0 {
            identical = try reader.readUInt8("flags") & Self.identicalFlag != 0
        } else {
            identical = false
        }
        reader.skipRemaining()
    }

    func write(to writer: inout ByteWriter) {
        precondition((try? validate()) != nil, "FileResult.validate() must pass before encoding")
        writer.write(transferID)
        writer.write(fileIndex)
        writer.write(status.rawValue)
        writer.write(string8: detail)
        if identical { writer.write(Self.identicalFlag) }
    }
}
