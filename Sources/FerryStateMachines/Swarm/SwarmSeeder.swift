import FerryWire

/// The sender's side of a swarm broadcast: which member seeds each chunk, what each member holds, and what the
/// sender must do when a member leaves or is cut off (PROTOCOL.md 11.11, docs/ARCHITECTURE.md "Swarm scheduler").
///
/// Pure and deterministic: the driver reports replies, acknowledgements, requests, reports and lost links; the
/// returned actions say which frames to send. Members are the indices of the offer's member list. Only members
/// that replied `relay` take part; the others (and members that leave the swarm) are served by the ordinary
/// per-peer path, and `serveDirectly` says when one joins it.
///
/// The seeding rule: each chunk goes from the sender to exactly one member, its seed, the active member without
/// the chunk that has the fewest bytes sent and not yet acknowledged on the sender's link (so a slow member, whose
/// acknowledgements come late, seeds less), ties to the one that seeded fewer bytes, then the lower index; never
/// beyond `window` bytes in flight to one member. A chunk a member already holds (a resumed prefix) is not sent:
/// that member is its seed.
public struct SwarmSeeder: Sendable {
    /// What the driver must do, in order.
    public enum Action: Equatable, Sendable {
        /// Send `swarmMembers` with these indices to each of them, and to each member cut off since the last list
        /// (which learns from it that it is out).
        case announceMembers([Int])
        /// Send the chunk's digest with `seed` (`chunkDigests`) to every active member that took the file.
        case announceSeed(SwarmChunk, seed: Int)
        /// Send the chunk to `member` on the sender's own link (a seed's copy, a seed anew, an answer).
        case send(SwarmChunk, to: Int)
        /// `member` is out of the swarm but still a recipient: send it every chunk it lacks
        /// (`missing(of:)`) on the ordinary per-peer path from now on, after the seeds (so that a member cut off
        /// for a bad chunk does not delay the others).
        case serveDirectly(member: Int)
        /// Name `member` in the output: `reporter` reported it.
        case badRelayer(member: Int, reporter: Int, reason: SwarmReportReason, chunk: SwarmChunk)
    }

    /// A member's part in the swarm.
    public enum Role: Equatable, Sendable {
        /// No reply yet.
        case pending
        /// Replied with `relay`: fetches from and serves other members.
        case active
        /// Replied without `relay`, or denied: not in the swarm.
        case outside
        /// Its link to the sender was lost, or it ended the transfer.
        case left
        /// Reported for a bad chunk, or replied with `relay` after the first member list: out of the swarm, served
        /// directly.
        case cutOff
    }

    private struct Member {
        var role: Role = .pending
        var accepted: [Bool] = []
        var inFlight: [SwarmChunk: Int] = [:]
        var inFlightBytes = 0
        var seededBytes = 0
    }

    /// The offer's chunk size.
    public let chunkSize: Int
    /// Bytes the sender keeps in flight to one member at most.
    public let window: Int
    private let sizes: [UInt64]
    private var members: [Member]
    private var holdings: [ChunkBitmap]
    /// Chunks each member holds, per file (so that "holds the whole file" is not a walk over its bitmap).
    private var heldPerFile: [[Int]]
    private var seeds: [SwarmChunk: Int] = [:]
    private var announced: [Int] = []
    /// Bytes of chunks the sender sent to members itself (seeds, seeds anew, answers to requests).
    public private(set) var sentBytes = 0
    /// Bytes members stored from other members (their `storedFromPeer` acknowledgements).
    public private(set) var relayedBytes = 0
    /// Reports received, per offender.
    public private(set) var reports: [Int: Int] = [:]

    /// A seeder for an offer of files of `sizes` bytes cut in `chunkSize` chunks, to `memberCount` members.
    public init(memberCount: Int, sizes: [UInt64], chunkSize: Int, window: Int) {
        precondition(chunkSize > 0 && window >= chunkSize && memberCount > 0)
        self.chunkSize = chunkSize
        self.window = window
        self.sizes = sizes
        let counts = sizes.map { Int(($0 + UInt64(chunkSize) - 1) / UInt64(chunkSize)) }
        members = Array(repeating: Member(), count: memberCount)
        holdings = Array(repeating: ChunkBitmap(chunkCounts: counts), count: memberCount)
        heldPerFile = Array(repeating: Array(repeating: 0, count: sizes.count), count: memberCount)
    }

    /// Records that `member` holds `chunk`; false when it did already.
    @discardableResult
    private mutating func insertHolding(_ member: Int, _ chunk: SwarmChunk) -> Bool {
        guard holdings[member].insert(chunk) else { return false }
        heldPerFile[member][chunk.file] += 1
        return true
    }

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
    /// Bytes in flight on the sender's link to `member`.
    public func inFlightBytes(of member: Int) -> Int { members[member].inFlightBytes }

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

    /// Member `member` replied: with `relay` it joins the swarm; `accepted` and `resumeOffsets` are its
    /// decisions (a resumed prefix counts as held). Throws for a second reply or decisions of the wrong count.
    public mutating func replyReceived(member: Int, relay: Bool, accepted: [Bool], resumeOffsets: [UInt64])
        throws(TransferProtocolError)
    {
        guard members[member].role == .pending else {
            throw TransferProtocolError("a second reply from member \(member)")
        }
        guard accepted.count == sizes.count, resumeOffsets.count == sizes.count else {
            throw TransferProtocolError("a reply with \(accepted.count) decisions for \(sizes.count) files")
        }
        members[member].accepted = accepted
        members[member].role = relay && accepted.contains(true) ? .active : .outside
        for file in sizes.indices where accepted[file] {
            let prefix = Int(min(resumeOffsets[file], sizes[file]) / UInt64(chunkSize))
            for index in 0..<prefix {
                insertHolding(member, SwarmChunk(file: file, index: index))
            }
        }
    }

    /// Member `member` replied with `relay` after the first member list (`repliesComplete` counted it out): it is
    /// not in the swarm but served directly by the sender, as a member cut off is (its link follows the swarm's rules:
    /// chunks out of order, no go-back-N). Returns the `serveDirectly` to carry out; nothing for a member that took no
    /// file, or that is not outside.
    public mutating func lateReplyReceived(member: Int, accepted: [Bool], resumeOffsets: [UInt64])
        throws(TransferProtocolError) -> [Action]
    {
        guard members[member].role == .outside, members[member].accepted.isEmpty else {
            throw TransferProtocolError("a second reply from member \(member)")
        }
        guard accepted.count == sizes.count, resumeOffsets.count == sizes.count else {
            throw TransferProtocolError("a reply with \(accepted.count) decisions for \(sizes.count) files")
        }
        members[member].accepted = accepted
        guard accepted.contains(true) else { return [] }
        members[member].role = .cutOff
        for file in sizes.indices where accepted[file] {
            let prefix = Int(min(resumeOffsets[file], sizes[file]) / UInt64(chunkSize))
            for index in 0..<prefix {
                insertHolding(member, SwarmChunk(file: file, index: index))
            }
        }
        announced.removeAll { $0 == member }
        return [.serveDirectly(member: member)]
    }

    /// Member `member` denied the offer, or its reply never came: it is not in the swarm.
    public mutating func declined(member: Int) {
        if members[member].role == .pending { members[member].role = .outside }
    }

    /// Every reply is in (or the driver stops waiting): the first `swarmMembers`.
    public mutating func repliesComplete() -> [Action] {
        for member in members.indices where members[member].role == .pending {
            members[member].role = .outside
        }
        return announceIfChanged()
    }

    /// The next chunk read from the source: where it goes. Nil when every candidate seed has a full window (try
    /// again after an acknowledgement); an empty list when no active member took the file (the per-peer path
    /// sends it).
    public mutating func seed(_ chunk: SwarmChunk) -> [Action]? {
        precondition(holdings[0].isValid(chunk), "seed(\(chunk)): no such chunk")
        let takers = activeMembers.filter { members[$0].accepted[chunk.file] }
        guard !takers.isEmpty else { return [] }
        if let holder = takers.first(where: { holdings[$0].contains(chunk) }) {
            seeds[chunk] = holder
            return [.announceSeed(chunk, seed: holder)]
        }
        let length = length(of: chunk)
        guard let seed = pickSeed(among: takers, length: length, respectingWindow: true) else { return nil }
        return assign(chunk, to: seed)
    }

    private func pickSeed(among candidates: [Int], length: Int, respectingWindow: Bool) -> Int? {
        candidates
            .filter { !respectingWindow || members[$0].inFlightBytes + length <= window }
            .min { a, b in
                (members[a].inFlightBytes, members[a].seededBytes, a) < (
                    members[b].inFlightBytes, members[b].seededBytes, b
                )
            }
    }

    private mutating func assign(_ chunk: SwarmChunk, to seed: Int) -> [Action] {
        seeds[chunk] = seed
        let length = length(of: chunk)
        members[seed].seededBytes += length
        return [.announceSeed(chunk, seed: seed)] + sendDirect(chunk, to: seed)
    }

    private mutating func sendDirect(_ chunk: SwarmChunk, to member: Int) -> [Action] {
        guard members[member].inFlight[chunk] == nil else { return [] }
        let length = length(of: chunk)
        members[member].inFlight[chunk] = length
        members[member].inFlightBytes += length
        sentBytes += length
        return [.send(chunk, to: member)]
    }

    /// `member` acknowledged `chunk`: `stored` (sent by the sender), `storedFromPeer` (relayed), or `corrupt`
    /// (send it again). Throws for a chunk outside the offer, a `stored` one the sender did not send to an active
    /// member, a
    /// `storedFromPeer` from a member outside the swarm, or another status.
    public mutating func ackReceived(member: Int, chunk: SwarmChunk, status: ChunkStatus) throws(TransferProtocolError)
        -> [Action]
    {
        guard holdings[member].isValid(chunk), members[member].accepted[safe: chunk.file] ?? false else {
            throw TransferProtocolError("an acknowledgement of \(chunk), which member \(member) did not take")
        }
        switch status {
        case .stored:
            // A member out of the swarm gets its chunks on the per-peer path: its acknowledgements only say what it holds.
            if let length = members[member].inFlight.removeValue(forKey: chunk) {
                members[member].inFlightBytes -= length
            } else if members[member].role == .active {
                throw TransferProtocolError("member \(member) acknowledged \(chunk), which was not sent to it")
            }
            insertHolding(member, chunk)
            return []
        case .storedFromPeer:
            guard members[member].role == .active || members[member].role == .cutOff else {
                throw TransferProtocolError("member \(member), not in the swarm, stored \(chunk) from a peer")
            }
            if insertHolding(member, chunk) { relayedBytes += length(of: chunk) }
            return []
        case .corrupt:
            guard let length = members[member].inFlight.removeValue(forKey: chunk) else {
                throw TransferProtocolError("member \(member) found \(chunk) corrupt, which was not sent to it")
            }
            members[member].inFlightBytes -= length
            // A member cut off is served directly: it gets the chunk again as an active one does.
            return members[member].role == .active || members[member].role == .cutOff
                ? sendDirect(chunk, to: member) : []
        default:
            throw TransferProtocolError("unknown chunk status \(status.rawValue)")
        }
    }

    /// `member` asked the sender for `chunk` (its seed is gone and nobody announced it): send it, after the seeds
    /// (the driver queues these behind fresh chunks). Throws for a member outside the swarm or a chunk outside its
    /// files; a chunk it holds or already has coming is not sent twice.
    public mutating func requestReceived(member: Int, chunk: SwarmChunk) throws(TransferProtocolError) -> [Action] {
        guard members[member].role == .active || members[member].role == .cutOff else {
            throw TransferProtocolError("a swarm request from member \(member), which is not in the swarm")
        }
        guard holdings[member].isValid(chunk), members[member].accepted[chunk.file] else {
            throw TransferProtocolError("member \(member) asked for \(chunk), which it did not take")
        }
        guard seeds[chunk] != nil, !holdings[member].contains(chunk) else { return [] }
        return sendDirect(chunk, to: member)
    }

    /// Sends `chunk` to `member`, which is served directly (cut off): nil while its window is full (try again after
    /// an acknowledgement), an empty list when it holds the chunk or has it coming already.
    public mutating func serve(_ chunk: SwarmChunk, to member: Int) -> [Action]? {
        guard holdings[member].isValid(chunk), members[member].accepted[safe: chunk.file] ?? false,
            !holdings[member].contains(chunk), members[member].inFlight[chunk] == nil
        else { return [] }
        let length = length(of: chunk)
        guard members[member].inFlightBytes == 0 || members[member].inFlightBytes + length <= window else { return nil }
        return sendDirect(chunk, to: member)
    }

    /// `member`'s result for `file` came: nothing more of the file goes to it and its chunks of the file in flight
    /// no longer count. When the file failed there, the chunks of it the member seeded that no other active member
    /// holds are seeded anew (it would never pass them on); a member that published the file holds them all and
    /// still serves them.
    public mutating func fileEnded(member: Int, file: Int, published: Bool) -> [Action] {
        guard members[member].accepted[safe: file] ?? false else { return [] }
        members[member].accepted[file] = false
        for (chunk, length) in members[member].inFlight where chunk.file == file {
            members[member].inFlight[chunk] = nil
            members[member].inFlightBytes -= length
        }
        guard members[member].role == .active, !published else { return [] }
        return reseedOrphans(of: member, file: file)
    }

    /// `member`'s link to the sender is gone, or it ended the transfer: it leaves the swarm. Chunks only it held
    /// are seeded anew among the others, then the new list goes out.
    public mutating func memberLeft(_ member: Int) -> [Action] {
        guard members[member].role != .left else { return [] }
        let wasActive = members[member].role == .active
        members[member].role = .left
        members[member].inFlight.removeAll()
        members[member].inFlightBytes = 0
        guard wasActive else { return [] }
        return reseedOrphans(of: member) + announceIfChanged()
    }

    /// `reporter` reported `offender` (PROTOCOL.md 11.11): counted and named; an active offender is cut off (out of
    /// the swarm, served directly from now on), its orphaned chunks seeded anew. Throws for a reporter outside the
    /// swarm or an offender index outside the offer.
    public mutating func reportReceived(
        from reporter: Int, offender: Int, reason: SwarmReportReason, chunk: SwarmChunk
    ) throws(TransferProtocolError) -> [Action] {
        guard members[reporter].role == .active || members[reporter].role == .cutOff else {
            throw TransferProtocolError("a swarm report from member \(reporter), which is not in the swarm")
        }
        guard offender >= 0, offender < members.count, offender != reporter else {
            throw TransferProtocolError("a swarm report on member \(offender) from member \(reporter)")
        }
        reports[offender, default: 0] += 1
        var actions: [Action] = [.badRelayer(member: offender, reporter: reporter, reason: reason, chunk: chunk)]
        guard members[offender].role == .active else { return actions }
        members[offender].role = .cutOff
        actions += reseedOrphans(of: offender) + announceIfChanged()
        actions.append(.serveDirectly(member: offender))
        return actions
    }

    /// Chunks seeded to `member` that no active member holds get a new seed: the digest with the new seed goes out
    /// before the new member list, so a member that reads the list already knows where each chunk comes from.
    private mutating func reseedOrphans(of member: Int, file: Int? = nil) -> [Action] {
        var actions: [Action] = []
        for chunk in seeds.keys.sorted() where seeds[chunk] == member && (file == nil || chunk.file == file) {
            let takers = activeMembers.filter { members[$0].accepted[chunk.file] }
            if let holder = takers.first(where: { holdings[$0].contains(chunk) }) {
                seeds[chunk] = holder
                actions.append(.announceSeed(chunk, seed: holder))
                continue
            }
            guard let seed = pickSeed(among: takers, length: length(of: chunk), respectingWindow: false) else {
                continue
            }
            actions += assign(chunk, to: seed)
        }
        return actions
    }

    private mutating func announceIfChanged() -> [Action] {
        let active = activeMembers
        guard active != announced else { return [] }
        announced = active
        return [.announceMembers(active)]
    }
}

extension Array {
    fileprivate subscript(safe index: Int) -> Element? {
        index >= 0 && index < count ? self[index] : nil
    }
}
