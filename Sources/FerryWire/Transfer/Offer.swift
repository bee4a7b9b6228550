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
/// swarm section is present when bytes follow the entries (an offer without one is the layout of before). The
/// digests section (PROTOCOL.md 11.3) follows the swarm section, written as `00 00` when there is no swarm:
///
/// ```
/// +-------------+------------------------------------------------------+
/// | digestCount | digestCount x { fileIndex u32 | digest bytes[32] }   |
/// | u32         | strictly increasing fileIndex, each below fileCount  |
/// +-------------+------------------------------------------------------+
/// ```
///
/// A digests section that does not parse is read as absent, never as an error: bytes there from before it existed
/// (`transfer-offer-extended.bin`) must keep decoding, and a lost hint only means the file is sent.
///
/// The folders section (PROTOCOL.md 11.3) follows a digests section that parsed, written as `00 00 00 00` when there
/// is no digest; it too is read as absent when it does not parse (see `Offer+Folders.swift`).
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
    /// The file digests (PROTOCOL.md 11.7, at `chunkSize`) the sender knows, by file index: hints that let a
    /// receiver holding a file answer it without its bytes (11.10 rule 10). Empty: none known (the layout of before).
    public var fileDigests: [Int: [UInt8]]
    /// Folders to create at the receiver ("album/empty", "/"-separated, relative as file paths are): the empty
    /// folders of a folder sent whole. Empty: none (the layout of before).
    public var folders: [String]
    /// The sender's flags of the folders section (`OfferFlags`): e.g. that its files replace earlier versions.
    public var flags: OfferFlags

    /// Bytes of one digests-section entry: a file index and a digest.
    static let digestEntryLength = 4 + FileDigest.length

    /// An offer with the given fields; `validate()` checks the limits.
    public init(
        transferID: TransferID, chunkSize: UInt32, codecs: CodecSet, files: [OfferedFile], swarm: Swarm? = nil,
        fileDigests: [Int: [UInt8]] = [:], folders: [String] = [], flags: OfferFlags = []
    ) {
        self.transferID = transferID
        self.chunkSize = chunkSize
        self.codecs = codecs
        self.files = files
        self.swarm = swarm
        self.fileDigests = fileDigests
        self.folders = folders
        self.flags = flags
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
        for (index, digest) in fileDigests {
            guard files.indices.contains(index) else {
                throw .invalidField("fileDigests: index \(index), not below fileCount \(files.count)")
            }
            guard digest.count == FileDigest.length else {
                throw .invalidField("fileDigests: \(digest.count) bytes for file \(index), not \(FileDigest.length)")
            }
        }
        try validateFolders()
        let length = encodedLength
        guard length <= Limits.maxFramePayload else {
            throw .payloadTooLarge(length: length, limit: Limits.maxFramePayload)
        }
    }

    /// Bytes of the payload.
    var encodedLength: Int {
        let later = hasFoldersSection
        let swarmLength = swarm?.encodedLength ?? (fileDigests.isEmpty && !later ? 0 : 2)
        let digests = fileDigests.isEmpty && !later ? 0 : 4 + fileDigests.count * Self.digestEntryLength
        return files.reduce(Self.fixedLength) { $0 + $1.encodedLength } + swarmLength + digests + foldersLength
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
        let digests = Self.readDigests(from: &reader, fileCount: count)
        fileDigests = digests ?? [:]
        // The folders section follows only a digests section that parsed (PROTOCOL.md 11.3).
        (folders, flags) = digests == nil ? ([], []) : Self.readFolders(from: &reader)
        reader.skipRemaining()
    }

    /// The digests section, or nil when it is absent or does not parse (PROTOCOL.md 11.3: read as absent).
    static func readDigests(from reader: inout ByteReader, fileCount: Int) -> [Int: [UInt8]]? {
        var copy = reader
        guard copy.remainingCount >= 4, let count = try? copy.readUInt32("digestCount"), count <= fileCount,
            copy.remainingCount / digestEntryLength >= Int(count)
        else { return nil }
        var digests: [Int: [UInt8]] = [:]
        var previous = -1
        for _ in 0..<Int(count) {
            guard let index = try? copy.readUInt32("fileIndex"), Int(index) > previous, Int(index) < fileCount,
                let digest = try? copy.readBytes(count: FileDigest.length, "digest")
            else { return nil }
            previous = Int(index)
            digests[previous] = Array(digest)
        }
        reader = copy
        return digests
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
        if let swarm {
            swarm.write(to: &writer)
        } else if !fileDigests.isEmpty || hasFoldersSection {
            writer.write(UInt16(0))  // an empty swarm section comes first (PROTOCOL.md 8)
        }
        guard !fileDigests.isEmpty || hasFoldersSection else { return }
        writer.write(UInt32(fileDigests.count))  // 0: an empty digests section before the folders section
        for index in fileDigests.keys.sorted() {
            writer.write(UInt32(index))
            writer.write(bytes: fileDigests[index] ?? [])
        }
        writeFolders(to: &writer)
    }
}
