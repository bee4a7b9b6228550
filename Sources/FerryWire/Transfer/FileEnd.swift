/// The sender's last word on one file: every chunk is sent, and this is the file digest of the whole file.
///
/// The file digest (`FileDigest`, PROTOCOL.md 11.7) is the SHA-256 over the chunk digests in offset order. The
/// receiver publishes the file only when every byte is stored and the digest it built from the chunks it verified
/// (and its resumed prefix) matches, so a file is never published from corrupted, missing or changed data.
/// Payload (kind 0x0104):
///
/// ```
/// +------------+-----------+------------+--------------------------+
/// | transferID | fileIndex | digest     | trailing bytes (ignored) |
/// | bytes[16]  | u32       | bytes[32]  |                          |
/// +------------+-----------+------------+--------------------------+
/// ```
public struct FileEnd: Equatable, Sendable {
    /// Bytes of the digest.
    public static let digestLength = FileDigest.length

    /// The transfer the file belongs to.
    public var transferID: TransferID
    /// The file's index in the offer's list.
    public var fileIndex: UInt32
    /// The file digest (`FileDigest`): exactly 32 bytes.
    public var digest: [UInt8]

    /// The end of file `fileIndex`, with its file digest (PROTOCOL.md 11.7).
    public init(transferID: TransferID, fileIndex: UInt32, digest: [UInt8]) {
        self.transferID = transferID
        self.fileIndex = fileIndex
        self.digest = digest
    }

    /// Throws `invalidField` unless the digest has exactly 32 bytes.
    public func validate() throws(WireError) {
        guard digest.count == Self.digestLength else {
            throw .invalidField("digest: \(digest.count) bytes, not \(Self.digestLength)")
        }
    }
}

extension FileEnd {
    init(payload: ArraySlice<UInt8>) throws(WireError) {
        var reader = ByteReader(payload, context: "fileEnd")
        transferID = try reader.readTransferID("transferID")
        fileIndex = try reader.readUInt32("fileIndex")
        digest = try reader.readBytes(count: Self.digestLength, "digest")
        reader.skipRemaining()
    }

    func write(to writer: inout ByteWriter) {
        precondition((try? validate()) != nil, "FileEnd.validate() must pass before encoding")
        writer.write(transferID)
        writer.write(fileIndex)
        writer.write(bytes: digest)
    }
}
