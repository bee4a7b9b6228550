/// A member announces chunks it holds and has verified against the sender's digests, to the members it is
/// linked with; they may then request them.
///
/// Sent as a member verifies each chunk (usually a range of one), and in full to a member when a swarm link to
/// it comes up. Payload (kind 0x0109, on a member link):
///
/// ```
/// +-----------+-----------+-------+--------------------------------------+--------------------------+
/// | swarmID   | fileIndex | count | count x (firstChunk u32, length u32) | trailing bytes (ignored) |
/// | bytes[16] | u32       | u16   | 8 bytes each                         |                          |
/// +-----------+-----------+-------+--------------------------------------+--------------------------+
/// ```
///
/// `count` is 1...1024; each range has `length` >= 1 and ends at most at chunk 2^32 - 1, else `invalidField`.
/// Ranges (rather than a list of indices) keep a resumed member's prefix to one entry.
public struct SwarmHave: Equatable, Sendable {
    /// The swarm.
    public var swarmID: SwarmID
    /// The file's index in the offer's list.
    public var fileIndex: UInt32
    /// Runs of chunk indices: `firstChunk ..< firstChunk + length`.
    public var ranges: [Range<UInt64>]

    /// An announcement of `ranges` of chunks of file `fileIndex`.
    public init(swarmID: SwarmID, fileIndex: UInt32, ranges: [Range<UInt64>]) {
        self.swarmID = swarmID
        self.fileIndex = fileIndex
        self.ranges = ranges
    }

    /// Throws `invalidField` for a range count outside 1...1024, an empty range or one past chunk 2^32 - 1.
    public func validate() throws(WireError) {
        guard (1...Limits.maxSwarmEntriesPerFrame).contains(ranges.count) else {
            throw .invalidField("count: \(ranges.count), not in 1...\(Limits.maxSwarmEntriesPerFrame)")
        }
        for range in ranges {
            try Self.check(range)
        }
    }

    static func check(_ range: Range<UInt64>) throws(WireError) {
        guard !range.isEmpty, range.upperBound <= UInt64(UInt32.max) + 1 else {
            throw .invalidField("range \(range.lowerBound)..<\(range.upperBound): empty or past chunk \(UInt32.max)")
        }
    }
}

extension SwarmHave {
    init(payload: ArraySlice<UInt8>) throws(WireError) {
        var reader = ByteReader(payload, context: "swarmHave")
        swarmID = try reader.readSwarmID("swarmID")
        fileIndex = try reader.readUInt32("fileIndex")
        let count = Int(try reader.readUInt16("count"))
        guard (1...Limits.maxSwarmEntriesPerFrame).contains(count) else {
            throw .invalidField("count: \(count), not in 1...\(Limits.maxSwarmEntriesPerFrame)")
        }
        var ranges: [Range<UInt64>] = []
        ranges.reserveCapacity(reader.boundedCapacity(count: count, minimumElementLength: 8))
        for _ in 0..<count {
            let first = UInt64(try reader.readUInt32("firstChunk"))
            let length = UInt64(try reader.readUInt32("length"))
            let range = first..<(first + length)
            try Self.check(range)
            ranges.append(range)
        }
        self.ranges = ranges
        reader.skipRemaining()
    }

    func write(to writer: inout ByteWriter) {
        precondition((try? validate()) != nil, "SwarmHave.validate() must pass before encoding")
        writer.write(swarmID)
        writer.write(fileIndex)
        writer.write(UInt16(ranges.count))
        for range in ranges {
            writer.write(UInt32(range.lowerBound))
            writer.write(UInt32(range.count))
        }
    }
}
