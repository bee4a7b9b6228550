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

/// A set of chunks of one broadcast as one bit per chunk and file: what a member holds.
public struct ChunkBitmap: Equatable, Sendable {
    private var words: [[UInt64]]
    /// Chunks per file.
    public let chunkCounts: [Int]
    /// Chunks in the set.
    public private(set) var count = 0

    /// An empty set over files of `chunkCounts` chunks.
    public init(chunkCounts: [Int]) {
        self.chunkCounts = chunkCounts
        words = chunkCounts.map { Array(repeating: 0, count: ($0 + 63) / 64) }
    }

    /// Whether `chunk` names a chunk of these files.
    public func isValid(_ chunk: SwarmChunk) -> Bool {
        chunk.file >= 0 && chunk.file < chunkCounts.count && chunk.index >= 0 && chunk.index < chunkCounts[chunk.file]
    }

    /// Whether `chunk` is in the set. Precondition: `isValid(chunk)`.
    public func contains(_ chunk: SwarmChunk) -> Bool {
        words[chunk.file][chunk.index / 64] & (1 << UInt64(chunk.index % 64)) != 0
    }

    /// Adds `chunk`; false when it was there already. Precondition: `isValid(chunk)`.
    @discardableResult
    public mutating func insert(_ chunk: SwarmChunk) -> Bool {
        let bit: UInt64 = 1 << UInt64(chunk.index % 64)
        guard words[chunk.file][chunk.index / 64] & bit == 0 else { return false }
        words[chunk.file][chunk.index / 64] |= bit
        count += 1
        return true
    }

    /// Removes `chunk`; false when it was not there. Precondition: `isValid(chunk)`.
    @discardableResult
    public mutating func remove(_ chunk: SwarmChunk) -> Bool {
        let bit: UInt64 = 1 << UInt64(chunk.index % 64)
        guard words[chunk.file][chunk.index / 64] & bit != 0 else { return false }
        words[chunk.file][chunk.index / 64] &= ~bit
        count -= 1
        return true
    }

    /// Removes every chunk of `file` (a file that failed: none of its chunks is held any more).
    public mutating func removeAll(of file: Int) {
        count -= words[file].reduce(0) { $0 + $1.nonzeroBitCount }
        words[file] = Array(repeating: 0, count: words[file].count)
    }

    /// Whether every chunk of `file` is in the set.
    public func containsAll(of file: Int) -> Bool {
        (0..<chunkCounts[file]).allSatisfy { contains(SwarmChunk(file: file, index: $0)) }
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
}
