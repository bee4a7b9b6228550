/// The sender's last word on one file: every chunk is sent, and this is the SHA-256 of the whole file.
///
/// The receiver publishes the file only when every byte is stored and its own digest of the staged file
/// matches, so a file is never published from corrupted, missing or changed data. Payload (kind 0x0104):
///
/// ```
/// +------------+-----------+------------+--------------------------+
/// | transferID | fileIndex | sha256     | trailing bytes (ignored) |
/// | bytes[16]  | u32       | bytes[32]  |                          |
/// +------------+-----------+------------+--------------------------+
/// ```
public struct FileEnd: Equatable, Sendable {
    /// Bytes of a SHA-256 digest.
    public static let digestLength = 32

    /// The transfer the file belongs to.
    public var transferID: TransferID
    /// The file's index in the offer's list.
    public var fileIndex: UInt32
    /// Exactly 32 bytes.
    public var sha256: [UInt8]

    /// The end of file `fileIndex`, with the SHA-256 of its bytes.
    public init(transferID: TransferID, fileIndex: UInt32, sha256: [UInt8]) {
        self.transferID = transferID
        self.fileIndex = fileIndex
        self.sha256 = sha256
    }

    /// Throws `invalidField` unless the digest has exactly 32 bytes.
    public func validate() throws(WireError) {
        guard sha256.count == Self.digestLength else {
            throw .invalidField("sha256: \(sha256.count) bytes, not \(Self.digestLength)")
        }
    }
}

extension FileEnd {
    init(payload: ArraySlice<UInt8>) throws(WireError) {
        var reader = ByteReader(payload, context: "fileEnd")
        transferID = try reader.readTransferID("transferID")
        fileIndex = try reader.readUInt32("fileIndex")
        sha256 = try reader.readBytes(count: Self.digestLength, "sha256")
        reader.skipRemaining()
    }

    func write(to writer: inout ByteWriter) {
        precondition((try? validate()) != nil, "FileEnd.validate() must pass before encoding")
        writer.write(transferID)
        writer.write(fileIndex)
        writer.write(bytes: sha256)
    }
}
