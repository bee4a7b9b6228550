/// A piece of one file: the unit of compression, verification, acknowledgement and resume.
///
/// The data is the rest of the payload, so decoding copies nothing (`data` is a slice of the frame's
/// payload) and a sender can write `frameHeader(...)` followed by a shared data buffer to many peers without
/// copying it per peer. Payload (kind 0x0102):
///
/// ```
///  0            16          20       28          32      33          65
/// +------------+-----------+--------+-----------+-------+-----------+--------------------------+
/// | transferID | fileIndex | offset | rawLength | codec | sha256    | data                     |
/// | bytes[16]  | u32       | u64    | u32       | u8    | bytes[32] | the rest of the payload  |
/// +------------+-----------+--------+-----------+-------+-----------+--------------------------+
/// ```
///
/// `rawLength` is 1...4 194 304 (`invalidField` otherwise). With codec none the data is exactly `rawLength`
/// bytes; with any other codec it is 1...`rawLength` bytes (a compressed chunk is never larger); anything else
/// is `malformed`. `sha256` is the chunk digest (`FileDigest.chunkDigest`): the SHA-256 of the raw bytes, after
/// inflation; the file digest in `FileEnd` is built from these.
public struct Chunk: Sendable, Equatable {
    /// transferID 16 + fileIndex 4 + offset 8 + rawLength 4 + codec 1 + sha256 32.
    public static let headerLength = 65

    /// The transfer the chunk belongs to.
    public var transferID: TransferID
    /// Index of the file in the offer's list.
    public var fileIndex: UInt32
    /// Position of the raw bytes in the file: a multiple of the offer's chunk size.
    public var offset: UInt64
    /// Number of raw bytes, after inflation.
    public var rawLength: UInt32
    /// How `data` is encoded (none, zlib, zstd).
    public var codec: Codec
    /// SHA-256 of the raw bytes (the chunk digest): exactly 32 bytes.
    public var sha256: [UInt8]
    /// The encoded bytes; when decoded, a slice of the frame payload.
    public var data: ArraySlice<UInt8>

    /// A chunk with the given fields; `validate()` checks the lengths.
    public init(
        transferID: TransferID, fileIndex: UInt32, offset: UInt64, rawLength: UInt32, codec: Codec, sha256: [UInt8],
        data: ArraySlice<UInt8>
    ) {
        self.transferID = transferID
        self.fileIndex = fileIndex
        self.offset = offset
        self.rawLength = rawLength
        self.codec = codec
        self.sha256 = sha256
        self.data = data
    }

    /// Throws `invalidField` for a `rawLength` outside 1...4 194 304 or a digest that is not 32 bytes, and
    /// `malformed` when the data length does not fit the codec (exactly `rawLength` with none, 1...`rawLength`
    /// otherwise).
    public func validate() throws(WireError) {
        guard sha256.count == FileDigest.length else {
            throw .invalidField("sha256: \(sha256.count) bytes, not \(FileDigest.length)")
        }
        try Self.checkLengths(rawLength: rawLength, codec: codec, dataLength: data.count)
    }

    /// Frame header (6 bytes) + chunk header (65 bytes) for a chunk whose data is `dataLength` bytes: the data
    /// itself is written separately, so one buffer can go to many peers without a copy. Precondition: the
    /// lengths and the digest pass the rules of `validate()`.
    public static func frameHeader(
        transferID: TransferID, fileIndex: UInt32, offset: UInt64, rawLength: UInt32, codec: Codec,
        sha256: [UInt8], dataLength: Int
    ) -> [UInt8] {
        precondition(sha256.count == FileDigest.length, "Chunk.frameHeader: a digest of \(sha256.count) bytes")
        precondition(
            (try? checkLengths(rawLength: rawLength, codec: codec, dataLength: dataLength)) != nil,
            "Chunk.frameHeader: dataLength \(dataLength) does not fit rawLength \(rawLength) with codec \(codec)")
        var writer = ByteWriter(reservingCapacity: Frame.headerLength + headerLength)
        writer.write(FrameKind.chunk.rawValue)
        writer.write(UInt32(headerLength + dataLength))
        writeHeader(
            to: &writer, transferID: transferID, fileIndex: fileIndex, offset: offset, rawLength: rawLength,
            codec: codec, sha256: sha256)
        return writer.bytes
    }

    static func checkLengths(rawLength: UInt32, codec: Codec, dataLength: Int) throws(WireError) {
        guard (1...Limits.maxChunkSize).contains(Int(rawLength)) else {
            throw .invalidField("rawLength: \(rawLength), not in 1...\(Limits.maxChunkSize)")
        }
        if codec == .none {
            guard dataLength == Int(rawLength) else {
                throw .malformed("chunk: \(dataLength) data bytes for rawLength \(rawLength) with codec none")
            }
        } else {
            guard (1...Int(rawLength)).contains(dataLength) else {
                throw .malformed("chunk: \(dataLength) data bytes for rawLength \(rawLength) with codec \(codec)")
            }
        }
    }

    private static func writeHeader(
        to writer: inout ByteWriter, transferID: TransferID, fileIndex: UInt32, offset: UInt64, rawLength: UInt32,
        codec: Codec, sha256: [UInt8]
    ) {
        writer.write(transferID)
        writer.write(fileIndex)
        writer.write(offset)
        writer.write(rawLength)
        writer.write(codec.rawValue)
        writer.write(bytes: sha256)
    }
}

extension Chunk {
    init(payload: ArraySlice<UInt8>) throws(WireError) {
        var reader = ByteReader(payload, context: "chunk")
        transferID = try reader.readTransferID("transferID")
        fileIndex = try reader.readUInt32("fileIndex")
        offset = try reader.readUInt64("offset")
        rawLength = try reader.readUInt32("rawLength")
        codec = Codec(rawValue: try reader.readUInt8("codec"))
        sha256 = try reader.readBytes(count: FileDigest.length, "sha256")
        data = payload.dropFirst(Self.headerLength)
        try Self.checkLengths(rawLength: rawLength, codec: codec, dataLength: data.count)
    }

    func write(to writer: inout ByteWriter) {
        precondition((try? validate()) != nil, "Chunk.validate() must pass before encoding")
        Self.writeHeader(
            to: &writer, transferID: transferID, fileIndex: fileIndex, offset: offset, rawLength: rawLength,
            codec: codec, sha256: sha256)
        writer.write(bytes: data)
    }
}
