/// The receiver's outcome for one file: published (under which name) or why not.
///
/// Lets the sending user see per peer and per file what happened, including the numbered name a receiver
/// chose when the offered one existed. Payload (kind 0x0105):
///
/// ```
/// +------------+-----------+--------+-----------------------+--------------------------+
/// | transferID | fileIndex | status | detail str8 (0...255) | trailing bytes (ignored) |
/// | bytes[16]  | u32       | u8     | u8 length + UTF-8     |                          |
/// +------------+-----------+--------+-----------------------+--------------------------+
/// ```
public struct FileResult: Equatable, Sendable {
    public var transferID: TransferID
    public var fileIndex: UInt32
    public var status: FileStatus
    /// With `.published`: the published relative name; otherwise free text for a human, may be empty.
    public var detail: String

    public init(transferID: TransferID, fileIndex: UInt32, status: FileStatus, detail: String = "") {
        self.transferID = transferID
        self.fileIndex = fileIndex
        self.status = status
        self.detail = detail
    }

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
        reader.skipRemaining()
    }

    func write(to writer: inout ByteWriter) {
        precondition((try? validate()) != nil, "FileResult.validate() must pass before encoding")
        writer.write(transferID)
        writer.write(fileIndex)
        writer.write(status.rawValue)
        writer.write(string8: detail)
    }
}
