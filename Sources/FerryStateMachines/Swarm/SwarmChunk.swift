/// One chunk of a swarm broadcast: file `file` of the offer, the chunk at offset `index x chunkSize`.
public struct SwarmChunk: Hashable, Comparable, Sendable, CustomStringConvertible {
    /// The file's index in the offer.
    public var file: Int
    /// The chunk's index in the file.
    public var index: Int

    /// Chunk `index` of file `file`.
    public init(file: Int, index: Int) {
        self.file = file
        self.index = index
    }

    /// File order, then chunk order.
    public static func < (lhs: SwarmChunk, rhs: SwarmChunk) -> Bool {
        (lhs.file, lhs.index) < (rhs.file, rhs.index)
    }

    /// "file F chunk C".
    public var description: String { "file \(file) chunk \(index)" }
}

/// A set of chunks of one broadcast as one bit per chunk and file: what a member holds, or what another announced.
///
/// One array of 64-bit words for every file, each file's chunks after the previous file's, so that a bitmap of an
/// offer of many small files is one allocation, and bitmaps over the same files (`chunkCounts`) line up word for
/// word: a range is added a word at a time, and compared with other bitmaps a word at a time (`insert(_:of:...)`).
public struct ChunkBitmap: Equatable, Sendable {
    private var words: [UInt64]
    /// The bit of each file's chunk 0.
    private let firstBits: [Int]
    /// Chunks per file.
    public let chunkCounts: [Int]
    /// Chunks in the set.
    public private(set) var count = 0

    /// An empty set over files of `chunkCounts` chunks.
    public init(chunkCounts: [Int]) {
        self.chunkCounts = chunkCounts
        var firstBits: [Int] = []
        firstBits.reserveCapacity(chunkCounts.count)
        var total = 0
        for count in chunkCounts {
            firstBits.append(total)
            total += count
        }
        self.firstBits = firstBits
        words = Array(repeating: 0, count: (total + 63) / 64)
    }

    /// Whether `chunk` names a chunk of these files.
    public func isValid(_ chunk: SwarmChunk) -> Bool {
        chunk.file >= 0 && chunk.file < chunkCounts.count && chunk.index >= 0 && chunk.index < chunkCounts[chunk.file]
    }

    private func bit(_ chunk: SwarmChunk) -> Int { firstBits[chunk.file] + chunk.index }

    /// Whether `chunk` is in the set. Precondition: `isValid(chunk)`.
    public func contains(_ chunk: SwarmChunk) -> Bool {
        let bit = bit(chunk)
        return words[bit >> 6] & (1 << UInt64(bit & 63)) != 0
    }

    /// Adds `chunk`; false when it was there already. Precondition: `isValid(chunk)`.
    @discardableResult
    public mutating func insert(_ chunk: SwarmChunk) -> Bool {
        let bit = bit(chunk)
        let mask: UInt64 = 1 << UInt64(bit & 63)
        guard words[bit >> 6] & mask == 0 else { return false }
        words[bit >> 6] |= mask
        count += 1
        return true
    }

    /// Removes `chunk`; false when it was not there. Precondition: `isValid(chunk)`.
    @discardableResult
    public mutating func remove(_ chunk: SwarmChunk) -> Bool {
        let bit = bit(chunk)
        let mask: UInt64 = 1 << UInt64(bit & 63)
        guard words[bit >> 6] & mask != 0 else { return false }
        words[bit >> 6] &= ~mask
        count -= 1
        return true
    }

    /// Adds chunks `range` of `file` a word (64 chunks) at a time, never chunk by chunk, and returns the indices of
    /// the chunks added (not in the set before) that are in `wanted` and not in `excluded`, two bitmaps over the same
    /// files; and the words visited. So the work is one step per word the range covers plus one per chunk returned,
    /// however long the range. Precondition: `range` lies inside the file, and the three bitmaps are over the same
    /// files.
    public mutating func insert(
        _ range: Range<Int>, of file: Int, returningAddedIn wanted: ChunkBitmap, notIn excluded: ChunkBitmap
    ) -> (added: [Int], words: Int) {
        precondition(wanted.chunkCounts == chunkCounts && excluded.chunkCounts == chunkCounts)
        var added: [Int] = []
        var visited = 0
        let first = firstBits[file]
        Self.forEachWord(first + range.lowerBound..<first + range.upperBound) { word, mask in
            visited += 1
            let new = mask & ~words[word]
            guard new != 0 else { return }
            words[word] |= new
            count += new.nonzeroBitCount
            var returned = new & wanted.words[word] & ~excluded.words[word]
            while returned != 0 {
                added.append((word << 6) + returned.trailingZeroBitCount - first)
                returned &= returned - 1
            }
        }
        return (added, visited)
    }

    /// Adds chunks `range` of `file`, a word at a time. Precondition: `range` lies inside the file.
    public mutating func insert(_ range: Range<Int>, of file: Int) {
        let first = firstBits[file]
        Self.forEachWord(first + range.lowerBound..<first + range.upperBound) { word, mask in
            count += (mask & ~words[word]).nonzeroBitCount
            words[word] |= mask
        }
    }

    /// Removes every chunk of `file` (a file that failed: none of its chunks is held any more).
    public mutating func removeAll(of file: Int) {
        let first = firstBits[file]
        Self.forEachWord(first..<first + chunkCounts[file]) { word, mask in
            count -= (mask & words[word]).nonzeroBitCount
            words[word] &= ~mask
        }
    }

    /// Whether every chunk of `file` is in the set.
    public func containsAll(of file: Int) -> Bool {
        var all = true
        let first = firstBits[file]
        Self.forEachWord(first..<first + chunkCounts[file]) { word, mask in
            if words[word] & mask != mask { all = false }
        }
        return all
    }

    /// The runs of consecutive chunks of `file` in the set, in order (what a `swarmHave` announces).
    public func ranges(of file: Int) -> [Range<Int>] {
        var result: [Range<Int>] = []
        var start: Int?
        for index in 0..<chunkCounts[file] {
            let present = contains(SwarmChunk(file: file, index: index))
            if present, start == nil { start = index }
            if !present, let first = start {
                result.append(first..<index)
                start = nil
            }
        }
        if let first = start { result.append(first..<chunkCounts[file]) }
        return result
    }

    /// Calls `body` with each word that bits `bits` touch, and the mask of those bits in it, in order.
    private static func forEachWord(_ bits: Range<Int>, _ body: (_ word: Int, _ mask: UInt64) -> Void) {
        var bit = bits.lowerBound
        while bit < bits.upperBound {
            let word = bit >> 6
            let low = bit & 63
            let high = min(64, bits.upperBound - (word << 6))
            let width = high - low
            let mask: UInt64 = width == 64 ? ~0 : ((1 << UInt64(width)) - 1) << UInt64(low)
            body(word, mask)
            bit = (word + 1) << 6
        }
    }
}
