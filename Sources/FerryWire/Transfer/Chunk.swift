/// A piece of one file: the unit of compression, checksum, acknowledgement and resume.
///
/// The data is the rest of the payload, so decoding copies nothing (`data` is a slice of the frame's
/// payload) and a sender can write `frameHeader(...)` followed by a shared data buffer to many peers without
/// copying it per peer. Payload (kind 0x0102):
///
/// ```
///  0            16          20       28          32      33      37
/// +------------+-----------+--------+-----------+-------+-------+------------------------------+
/// | transferID | fileIndex | offset | rawLength | codec | crc32 | data                         |
/// | bytes[16]  | u32       | u64    | u32       | u8    | u32   | the rest of the payload      |
/// +------------+-----------+--------+-----------+-------+-------+------------------------------+
/// ```
///
/// `rawLength` is 1...4 194 304 (`invalidField` otherwise). With codec none the data is exactly `rawLength`
/// bytes; with any other codec it is 1...`rawLength` bytes (a compressed chunk is never larger); anything else
/// is `malformed`. `crc32` (zlib's `crc32`) covers the raw bytes, after inflation.
public struct Chunk: Sendable, Equatable {
    /// transferID 16 + fileIndex 4 + offset 8 + rawLength 4 + codec 1 + crc32 4.
    public static let headerLength = 37

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
    /// CRC-32 (ISO-HDLC, as zlib's `crc32`) of the raw bytes.
    public var crc32: UInt32
    /// The encoded bytes; when decoded, a slice of the frame payload.
    public var data: ArraySlice<UInt8>

    /// A chunk with the given fields; `validate()` checks the lengths.
    public init(
        transferID: TransferID, fileIndex: UInt32, offset: UInt64, rawLength: UInt32, codec: Codec, crc32: UInt32,
        data: ArraySlice<UInt8>
    ) {
        self.transferID = transferID
        self.fileIndex = fileIndex
        self.offset = offset
        self.rawLength = rawLength
        self.codec = codec
        self.crc32 = crc32
        self.data = data
    }

    /// Throws `invalidField` for a `rawLength` outside 1...4 194 304 and `malformed` when the data length
    /// does not fit the codec (exactly `rawLength` with none, 1...`rawLength` otherwise).
    public func validate() throws(WireError) {
        try Self.checkLengths(rawLength: rawLength, codec: codec, dataLength: data.count)
    }

    /// Frame header (6 bytes) + chunk header (37 bytes) for a chunk whose data is `dataLength` bytes: the data
    /// itself is written separately, so one buffer can go to many peers without a copy. Precondition: the
    /// lengths pass the rules of `validate()`.
    public static func frameHeader(
        transferID: TransferID, fileIndex: UInt32, offset: UInt64, rawLength: UInt32, codec: Codec, crc32: UInt32,
        dataLength: Int
    ) -> [UInt8] {
        precondition(
            (try? checkLengths(rawLength: rawLength, codec: codec, dataLength: dataLength)) != nil,
            "Chunk.frameHeader: dataLength \(dataLength) does not fit rawLength \(rawLength) with codec \(codec)")
        var writer = ByteWriter(reservingCapacity: Frame.headerLength + headerLength)
        writer.write(FrameKind.chunk.rawValue)
        writer.write(UInt32(headerLength + dataLength))
        writeHeader(
            to: &writer, transferID: transferID, fileIndex: fileIndex, offset: offset, rawLength: rawLength,
            codec: codec, crc32: crc32)
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
        codec: Codec, crc32: UInt32
    ) {
        writer.write(transferID)
        writer.write(fileIndex)
        writer.write(offset)
        writer.write(rawLength)
        writer.write(codec.rawValue)
        writer.write(crc32)
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
        crc32 = try reader.readUInt32("crc32")
        data = payload.dropFirst(Self.headerLength)
        try Self.checkLengths(rawLength: rawLength, codec: codec, dataLength: data.count)
    }

    func write(to writer: inout ByteWriter) {
        precondition((try? validate()) != nil, "Chunk.validate() must pass before encoding")
        Self.writeHeader(
            to: &writer, transferID: transferID, fileIndex: fileIndex, offset: offset, rawLength: rawLength,
            codec: codec, crc32: crc32)
        writer.write(bytes: data)
    }
}
