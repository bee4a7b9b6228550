/// The sender's proposal of a transfer: which files, how they are cut and which codecs it can use.
///
/// Nothing of a file is sent before the receiver accepts it (`OfferReply`): consent before bytes. The offer
/// carries everything the receiver decides on, and what it keys resumable staged data by. Payload (kind
/// 0x0100), entries as in `OfferedFile`:
///
/// ```
/// +------------+-----------+--------+-----------+------------------------+------------------+----------+
/// | transferID | chunkSize | codecs | fileCount | fileCount x entry      | swarm (optional) | trailing |
/// | bytes[16]  | u32       | u8     | u32       | see OfferedFile        | see Swarm        | (ignored)|
/// +------------+-----------+--------+-----------+------------------------+------------------+----------+
/// ```
///
/// `chunkSize` is 65 536...4 194 304; `fileCount` is 1...10 000 and is checked before anything is reserved. The
/// swarm section is present when bytes follow the entries (an offer without one is the layout of before).
public struct Offer: Equatable, Sendable {
    /// Bytes before the first entry.
    static let fixedLength = TransferID.length + 4 + 1 + 4

    /// The transfer's ID, chosen by the sender (random).
    public var transferID: TransferID
    /// Every chunk except a file's last one carries exactly this many raw bytes.
    public var chunkSize: UInt32
    /// Codecs the sender can produce.
    public var codecs: CodecSet
    /// The files offered, in order; chunks and results name them by index.
    public var files: [OfferedFile]
    /// The broadcast's swarm (every recipient, PROTOCOL.md 11.11), or nil for a plain transfer.
    public var swarm: Swarm?

    /// An offer with the given fields; `validate()` checks the limits.
    public init(
        transferID: TransferID, chunkSize: UInt32, codecs: CodecSet, files: [OfferedFile], swarm: Swarm? = nil
    ) {
        self.transferID = transferID
        self.chunkSize = chunkSize
        self.codecs = codecs
        self.files = files
        self.swarm = swarm
    }

    /// Throws `invalidField` for a chunk size or file count out of range, an invalid entry or swarm section, and
    /// `payloadTooLarge` when the encoded payload would exceed `Limits.maxFramePayload`.
    public func validate() throws(WireError) {
        try Self.checkChunkSize(chunkSize)
        guard (1...Limits.maxOfferFiles).contains(files.count) else {
            throw .invalidField("fileCount: \(files.count), not in 1...\(Limits.maxOfferFiles)")
        }
        for file in files {
            try file.validate()
        }
        try swarm?.validate()
        let length = encodedLength
        guard length <= Limits.maxFramePayload else {
            throw .payloadTooLarge(length: length, limit: Limits.maxFramePayload)
        }
    }

    /// Bytes of the payload.
    var encodedLength: Int {
        files.reduce(Self.fixedLength) { $0 + $1.encodedLength } + (swarm?.encodedLength ?? 0)
    }

    static func checkChunkSize(_ chunkSize: UInt32) throws(WireError) {
        guard (Limits.minChunkSize...Limits.maxChunkSize).contains(Int(chunkSize)) else {
            throw .invalidField("chunkSize: \(chunkSize), not in \(Limits.minChunkSize)...\(Limits.maxChunkSize)")
        }
    }
}

extension Offer {
    init(payload: ArraySlice<UInt8>) throws(WireError) {
        var reader = ByteReader(payload, context: "offer")
        transferID = try reader.readTransferID("transferID")
        chunkSize = try reader.readUInt32("chunkSize")
        try Self.checkChunkSize(chunkSize)
        codecs = CodecSet(rawValue: try reader.readUInt8("codecs"))
        let count = try reader.readCount("fileCount", counts: 1...Limits.maxOfferFiles)
        var files: [OfferedFile] = []
        files.reserveCapacity(
            reader.boundedCapacity(count: count, minimumElementLength: OfferedFile.minimumEncodedLength))
        for _ in 0..<count {
            files.append(try OfferedFile(from: &reader))
        }
        self.files = files
        swarm = try Swarm.read(from: &reader)
        reader.skipRemaining()
    }

    func write(to writer: inout ByteWriter) {
        precondition((try? validate()) != nil, "Offer.validate() must pass before encoding")
        writer.write(transferID)
        writer.write(chunkSize)
        writer.write(codecs.rawValue)
        writer.write(UInt32(files.count))
        for file in files {
            file.write(to: &writer)
        }
        swarm?.write(to: &writer)
    }
}
