import FerryWire

/// What a `SwarmSeeder` can be asked without changing it: who holds, takes and seeds what, and what is in flight.
extension SwarmSeeder {
    /// Whether `member` holds every chunk of `file` (an empty file: always).
    public func holdsAll(_ member: Int, of file: Int) -> Bool { heldPerFile[member][file] == chunkCounts[file] }
    /// Whether `member` took `file` (and has not ended it, `fileEnded`).
    public func takes(_ member: Int, file: Int) -> Bool { members[member].accepted[safe: file] ?? false }

    /// Chunks of each file.
    public var chunkCounts: [Int] { holdings[0].chunkCounts }
    /// Member `member`'s part.
    public func role(of member: Int) -> Role { members[member].role }
    /// The active members, in order: what the last `announceMembers` said (or will say).
    public var activeMembers: [Int] { members.indices.filter { members[$0].role == .active } }
    /// The seed of `chunk`, once chosen.
    public func seed(of chunk: SwarmChunk) -> Int? { seeds[chunk] }
    /// Whether `member` holds `chunk` (acknowledged, or in its resumed prefix).
    public func holds(_ member: Int, _ chunk: SwarmChunk) -> Bool { holdings[member].contains(chunk) }
    /// Chunks `member` holds.
    public func heldCount(of member: Int) -> Int { holdings[member].count }
    /// Bytes in flight on the sender's link to `member`: decided (queued to go), sent, and not yet acknowledged.
    public func inFlightBytes(of member: Int) -> Int { members[member].inFlightBytes }
    /// The most bytes that were in flight to `member` at once (never more than `window`).
    public func peakInFlightBytes(of member: Int) -> Int { members[member].peakInFlightBytes }
    /// Bytes of chunks `member` seeded that another active member that took the file lacks and that no other member
    /// acknowledged `storedFromPeer` yet: what it has not been seen to pass on.
    public func unrelayedBytes(of member: Int) -> Int { members[member].unrelayedBytes }
    /// Chunks `member` asked for that wait for room in its window.
    public func waitingRequests(of member: Int) -> [SwarmChunk] { members[member].requested }

    /// Raw bytes of `chunk`.
    public func length(of chunk: SwarmChunk) -> Int {
        let offset = UInt64(chunk.index) * UInt64(chunkSize)
        return Int(min(UInt64(chunkSize), sizes[chunk.file] - offset))
    }

    /// The chunks of accepted files `member` does not hold, in order.
    public func missing(of member: Int) -> [SwarmChunk] {
        var result: [SwarmChunk] = []
        for file in chunkCounts.indices where members[member].accepted[safe: file] ?? false {
            for index in 0..<chunkCounts[file] where !holdings[member].contains(SwarmChunk(file: file, index: index)) {
                result.append(SwarmChunk(file: file, index: index))
            }
        }
        return result
    }
}
