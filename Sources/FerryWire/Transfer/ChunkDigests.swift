/// The sender's chunk digests for a run of chunks of one file, each with the member that seeds it.
///
/// A member checks a chunk that reached it from another member against this digest only: it came over the
/// sender's own link, so a relaying member cannot change a byte unnoticed. The sender sends the digest of a chunk
/// to every member at the latest when it sends the chunk to its seed, and again (same digest, new seed) when it
/// seeds the chunk anew. Payload (kind 0x0108, on the sender's link):
///
/// ```
/// +------------+-----------+------------+-------+----------------------------+--------------------------+
/// | transferID | fileIndex | firstChunk | count | count x (seed u16, sha256) | trailing bytes (ignored) |
/// | bytes[16]  | u32       | u32        | u16   | 34 bytes each              |                          |
/// +------------+-----------+------------+-------+----------------------------+--------------------------+
/// ```
///
/// Entry `i` is chunk `firstChunk + i` (the chunk at offset `(firstChunk + i) x chunkSize`). `count` is
/// 1...1024 and `firstChunk + count` at most 2^32, else `invalidField`. `seed` is an index into the offer's
/// member list, or `noSeed` (0xFFFF): no member is given the chunk first (ask the sender for it).
public struct ChunkDigests: Equatable, Sendable {
    /// One chunk's digest and seed.
    public struct Entry: Equatable, Sendable {
        /// The member the sender gives this chunk to first, or `ChunkDigests.noSeed`.
        public var seed: UInt16
        /// SHA-256 of the chunk's raw bytes: exactly 32 bytes.
        public var sha256: [UInt8]

        /// An entry with the given fields.
        public init(seed: UInt16, sha256: [UInt8]) {
            self.seed = seed
            self.sha256 = sha256
        }
    }

    /// The seed value that names no member.
    public static let noSeed: UInt16 = 0xFFFF
    static let entryLength = 2 + FileDigest.length

    /// The recipient's transfer (the sender's link).
    public var transferID: TransferID
    /// The file's index in the offer's list.
    public var fileIndex: UInt32
    /// Index of the first chunk described.
    public var firstChunk: UInt32
    /// One entry per chunk from `firstChunk` on.
    public var entries: [Entry]

    /// Digests of chunks `firstChunk...` of file `fileIndex`.
    public init(transferID: TransferID, fileIndex: UInt32, firstChunk: UInt32, entries: [Entry]) {
        self.transferID = transferID
        self.fileIndex = fileIndex
        self.firstChunk = firstChunk
        self.entries = entries
    }

    /// Throws `invalidField` for an entry count outside 1...1024, a run past chunk 2^32 - 1 or a digest that is
    /// not 32 bytes.
    public func validate() throws(WireError) {
        try Self.checkRun(first: firstChunk, count: entries.count)
        for entry in entries where entry.sha256.count != FileDigest.length {
            throw .invalidField("sha256: \(entry.sha256.count) bytes, not \(FileDigest.length)")
        }
    }

    static func checkRun(first: UInt32, count: Int) throws(WireError) {
        guard (1...Limits.maxSwarmEntriesPerFrame).contains(count) else {
            throw .invalidField("count: \(count), not in 1...\(Limits.maxSwarmEntriesPerFrame)")
        }
        guard UInt64(first) + UInt64(count) <= UInt64(UInt32.max) + 1 else {
            throw .invalidField("chunks \(first) + \(count): past chunk \(UInt32.max)")
        }
    }
}

extension ChunkDigests {
    init(payload: ArraySlice<UInt8>) throws(WireError) {
        var reader = ByteReader(payload, context: "chunkDigests")
        transferID = try reader.readTransferID("transferID")
        fileIndex = try reader.readUInt32("fileIndex")
        firstChunk = try reader.readUInt32("firstChunk")
        let count = Int(try reader.readUInt16("count"))
        try Self.checkRun(first: firstChunk, count: count)
        var entries: [Entry] = []
        entries.reserveCapacity(reader.boundedCapacity(count: count, minimumElementLength: Self.entryLength))
        for _ in 0..<count {
            let seed = try reader.readUInt16("seed")
            entries.append(Entry(seed: seed, sha256: try reader.readBytes(count: FileDigest.length, "sha256")))
        }
        self.entries = entries
        reader.skipRemaining()
    }

    func write(to writer: inout ByteWriter) {
        precondition((try? validate()) != nil, "ChunkDigests.validate() must pass before encoding")
        writer.write(transferID)
        writer.write(fileIndex)
        writer.write(firstChunk)
        writer.write(UInt16(entries.count))
        for entry in entries {
            writer.write(entry.seed)
            writer.write(bytes: entry.sha256)
        }
    }
}
