import FerryWire

/// One member's side of a swarm broadcast: the sender's digests, what the other members announced, which chunk to
/// request from whom, what to do with a bad chunk, and which requests of other members to serve (PROTOCOL.md 11.11).
///
/// Pure and deterministic: the driver reports frames, verdicts and links; the returned actions say which frames to
/// send. Members are the indices of the offer's member list; `me` is this member's.
///
/// The request rule: at most `maxInFlight` requests outstanding to one member; chunks are taken rarest first (the
/// fewest usable members announced it), ties in file and chunk order; each from the announcer with the fewest of
/// our requests outstanding, ties to the one nearest after us in member order (so members spread their requests
/// over different holders). A chunk is requested from the sender when its seed is gone (out of the list, cut off,
/// its link down, or no seed) and no usable member announced it, or every announcer failed us for it.
///
/// Nobody is waited for forever: the driver calls `progressCheck()` every request timeout; when nothing was stored
/// since the previous call, every chunk asked of the sender is asked again (the sender sends a chunk it has coming to
/// a member once only), and every chunk waiting for its seed's announcement counts as failed by that seed, so it is
/// asked of the sender.
///
/// A relayed chunk is announced only once the driver reports it written (`relayedChunkStored`): a chunk this member
/// announced and cannot serve would be served as whatever its staged file holds there, and the member that asked
/// would cut this honest one off as a bad relayer. A chunk whose store failed (`storeFailed`) is not held; a file
/// that failed here (`fileEnded`) is neither fetched nor served any more.
public struct SwarmFetcher: Sendable {
    /// This member's index in the offer's list.
    public let me: Int
    /// Requests outstanding to one member at most (K).
    public let maxInFlight: Int
    /// Requests outstanding to all members together at most: the relayed chunks on their way to this member, and so
    /// its memory, do not grow with the number of members.
    public let maxTotalInFlight: Int
    private let accepted: [Bool]
    private var peers: [Peer]
    private var held: ChunkBitmap
    private var unverified: Set<SwarmChunk> = []
    /// Relayed chunks held (so not asked again) whose store the driver has not confirmed: neither announced nor served.
    private var storing: Set<SwarmChunk> = []
    /// Files that ended here (published or failed): nothing of them is fetched any more.
    private var ended: [Bool]
    private var digests: [SwarmChunk: [UInt8]] = [:]
    /// The chunks whose digest the sender sent (what `digests` has), as a bitmap: compared a word at a time with a
    /// member's announcement.
    private var known: ChunkBitmap
    /// An empty bitmap over the offer's files: a member's announcements start as a copy (sharing its layout).
    private let noChunks: ChunkBitmap
    private var seeds: [SwarmChunk: Int?] = [:]
    private var askedSender: Set<SwarmChunk> = []
    /// Who each chunk is asked of now (`Self.sender` for the sender): at most one request per chunk at a time.
    private var requestedFrom: [SwarmChunk: Int] = [:]
    /// Chunks with a digest that are not held: what may be asked of the sender.
    private var pending: Set<SwarmChunk> = []
    private static let sender = -1
    private var failedBy: [SwarmChunk: Set<Int>] = [:]
    private var inSwarm = true
    /// A chunk was stored (or a resumed one verified) since the last `progressCheck()`.
    private var progressed = false
    /// Members this member cut off, in order.
    public private(set) var cutOffMembers: [Int] = []
    /// Words (64 chunks each) of other members' holdings visited merging their announcements: a test bounds the work
    /// one `swarmHave` costs by it.
    public private(set) var announcementWords = 0

    /// A fetcher for member `me` of `memberCount`, over files of `chunkCounts` chunks of which it took `accepted`,
    /// holding the first `resumedChunks` of each (its resumed prefix, checked once the digests arrive); at most
    /// `maxInFlight` requests outstanding to one member and `maxTotalInFlight` to all.
    public init(
        me: Int, memberCount: Int, chunkCounts: [Int], accepted: [Bool], resumedChunks: [Int],
        maxInFlight: Int = Limits.maxSwarmRequestsInFlight, maxTotalInFlight: Int = .max
    ) {
        precondition(me >= 0 && me < memberCount && maxInFlight > 0 && maxTotalInFlight > 0)
        precondition(chunkCounts.count == accepted.count && chunkCounts.count == resumedChunks.count)
        self.me = me
        self.maxInFlight = maxInFlight
        self.maxTotalInFlight = maxTotalInFlight
        self.accepted = accepted
        ended = Array(repeating: false, count: chunkCounts.count)
        peers = Array(repeating: Peer(), count: memberCount)
        held = ChunkBitmap(chunkCounts: chunkCounts)
        known = held
        noChunks = held
        for file in chunkCounts.indices where accepted[file] {
            let prefix = 0..<max(0, min(resumedChunks[file], chunkCounts[file]))
            held.insert(prefix, of: file)
            for index in prefix { unverified.insert(SwarmChunk(file: file, index: index)) }
        }
    }

    /// Files of the offer.
    public var fileCount: Int { held.chunkCounts.count }
    /// Chunks of `file`.
    public func chunkCount(of file: Int) -> Int { held.chunkCounts[file] }
    /// Whether this member holds `chunk`, verified.
    public func holds(_ chunk: SwarmChunk) -> Bool {
        held.contains(chunk) && !unverified.contains(chunk) && !storing.contains(chunk)
    }
    /// The sender's digest of `chunk`, once known.
    public func digest(of chunk: SwarmChunk) -> [UInt8]? { digests[chunk] }
    /// Every chunk of every accepted file that did not end here is held, verified and stored.
    public var isComplete: Bool {
        unverified.isEmpty && storing.isEmpty
            && held.chunkCounts.indices.allSatisfy { !accepted[$0] || ended[$0] || held.containsAll(of: $0) }
    }
    /// Requests outstanding to `member`.
    public func outstanding(to member: Int) -> Set<SwarmChunk> { peers[member].outstanding }
    /// This member left the swarm (the sender's list left it out): it fetches and serves nothing any more.
    public var hasLeft: Bool { !inSwarm }
    /// Chunks asked of the sender and not yet arrived.
    public var requestedFromSender: Set<SwarmChunk> { askedSender }

    /// The runs of held, verified chunks of `file`, for a `swarmHave`.
    public func heldRanges(of file: Int) -> [Range<Int>] {
        var verified = held
        for chunk in unverified.union(storing) { verified.remove(chunk) }
        return verified.ranges(of: file)
    }

    // MARK: From the sender

    /// `swarmMembers`: the members that take part now. Members no longer in it are forgotten (their requests go
    /// elsewhere); when this member is not in it, it leaves the swarm.
    public mutating func membersReceived(_ members: [Int]) -> [Action] {
        guard inSwarm else { return [] }
        let list = Set(members.filter { $0 >= 0 && $0 < peers.count })
        guard list.contains(me) else {
            inSwarm = false
            for member in peers.indices { forget(member) }
            askedSender.removeAll()
            requestedFrom.removeAll()
            return [.leftSwarm]
        }
        for member in peers.indices where member != me {
            let active = list.contains(member)
            if peers[member].active, !active { forget(member) }
            peers[member].active = active
            if active { peers[member].wasActive = true }
        }
        return schedule()
    }

    /// `chunkDigests`: digests of chunks `first...` of `file`, each with its seed (nil: no seed).
    public mutating func digestsReceived(file: Int, first: Int, entries: [(seed: Int?, sha256: [UInt8])])
        throws(TransferProtocolError) -> [Action]
    {
        guard inSwarm else { return [] }
        var actions: [Action] = []
        for (offset, entry) in entries.enumerated() {
            let chunk = SwarmChunk(file: file, index: first + offset)
            guard held.isValid(chunk), accepted[file] else {
                throw TransferProtocolError("a digest of \(chunk), which this member did not take")
            }
            guard !ended[file] else { continue }  // ended here: nothing of it is fetched
            if digests[chunk] == nil, unverified.contains(chunk) { actions.append(.verifyHeld(chunk)) }
            digests[chunk] = entry.sha256
            known.insert(chunk)
            if !held.contains(chunk) { pending.insert(chunk) }
            seeds[chunk] = entry.seed.flatMap { $0 >= 0 && $0 < peers.count ? $0 : nil }
        }
        return actions + schedule()
    }

    /// A chunk from the sender (as seed, seed anew, or an answer) was verified and stored by the ordinary path.
    public mutating func senderChunkStored(_ chunk: SwarmChunk) -> [Action] {
        guard held.isValid(chunk) else { return [] }
        if askedSender.remove(chunk) != nil { endRequest(chunk, by: Self.sender) }
        unverified.remove(chunk)
        pending.remove(chunk)
        guard held.insert(chunk) else { return [] }
        progressed = true
        return inSwarm ? [.announce(chunk)] + schedule() : []
    }

    /// A chunk of the resumed prefix was hashed: `sha256` is the digest of the staged bytes. A mismatch drops it
    /// from the held chunks, and the transfer is told to (`unstore`): it is fetched like any other.
    public mutating func prefixChecked(_ chunk: SwarmChunk, sha256: [UInt8]) -> [Action] {
        guard unverified.remove(chunk) != nil else { return [] }
        guard sha256 == digests[chunk] else {
            held.remove(chunk)
            guard !ended[chunk.file] else { return [.unstore(chunk)] }
            pending.insert(chunk)
            return [.unstore(chunk)] + schedule()
        }
        progressed = true
        return inSwarm ? [.announce(chunk)] : []
    }

    // MARK: From other members

    /// The swarm link to `member` is up (TLS proved its device ID, which is in the offer's list).
    public mutating func linkUp(_ member: Int) -> [Action] {
        guard inSwarm, member != me, !peers[member].cutOff else { return [] }
        peers[member].link = .up
        return [.announceAll(to: member)] + schedule()
    }

    /// The swarm link to `member` failed or closed: its requests go elsewhere; a chunk it seeds and nobody else
    /// announced is asked of the sender.
    public mutating func linkDown(_ member: Int) -> [Action] {
        guard member != me else { return [] }
        peers[member].link = .down
        forget(member)
        return inSwarm ? schedule() : []
    }

    /// `swarmHave` from `member`: it holds chunks `ranges` of `file`. Announcements of a member not in the list yet
    /// are kept (they are used once it is: the sender's list may reach this member after that member's first
    /// announcements, which it never repeats); those of a member cut off, refusing everything, left out by a list,
    /// or whose link is not up are ignored, before anything else is done with them. Throws for a file outside the
    /// offer or a range past its last chunk (PROTOCOL.md 11.11: swarmHave ranges stay inside the file).
    ///
    /// The work is bounded by the frame, not by the lengths of its ranges: they are merged (overlaps cost nothing
    /// more), then added to the member's bitmap a word (64 chunks) at a time; only chunks new for that member whose
    /// digest is known and that this member lacks are looked at one by one, each once per member.
    public mutating func haveReceived(from member: Int, file: Int, ranges: [Range<Int>]) throws(TransferProtocolError)
        -> [Action]
    {
        guard file >= 0, file < fileCount else {
            throw TransferProtocolError("member \(member) announced file \(file), which is not in the offer")
        }
        let count = held.chunkCounts[file]
        for range in ranges where range.isEmpty || range.lowerBound < 0 || range.upperBound > count {
            throw TransferProtocolError(
                "member \(member) announced chunks \(range.lowerBound)..<\(range.upperBound) of file \(file), which has "
                    + "\(count)")
        }
        guard inSwarm, member != me, peers[member].link == .up, !peers[member].cutOff, !peers[member].refusesAll,
            peers[member].active || !peers[member].wasActive, accepted[file], !ended[file]
        else { return [] }
        var has = peers[member].has ?? noChunks
        peers[member].has = nil  // not shared while it changes: its words are not copied
        var fresh: [SwarmChunk] = []
        for range in Self.merged(ranges) {
            let (added, words) = has.insert(range, of: file, returningAddedIn: known, notIn: held)
            announcementWords += words
            for index in added {
                let chunk = SwarmChunk(file: file, index: index)
                if !isRequested(chunk) { fresh.append(chunk) }
            }
        }
        peers[member].has = has
        // Only these chunks can have become requestable: slots free up on other events, which schedule everything.
        return schedule(only: fresh, askSender: false)
    }

    /// `haveReceived(from:file:ranges:)` for a list of chunks, file by file in the order they first appear. Throws
    /// for a chunk outside the offer before anything is done.
    public mutating func haveReceived(from member: Int, _ chunks: [SwarmChunk]) throws(TransferProtocolError)
        -> [Action]
    {
        for chunk in chunks where !held.isValid(chunk) {
            throw TransferProtocolError("member \(member) announced \(chunk), which is not in the offer")
        }
        var files: [Int] = []
        for chunk in chunks where !files.contains(chunk.file) { files.append(chunk.file) }
        var actions: [Action] = []
        for file in files {
            let ranges = chunks.filter { $0.file == file }.map { $0.index..<$0.index + 1 }
            actions += try haveReceived(from: member, file: file, ranges: ranges)
        }
        return actions
    }

    /// `ranges` sorted and merged where they overlap or touch.
    private static func merged(_ ranges: [Range<Int>]) -> [Range<Int>] {
        var result: [Range<Int>] = []
        for range in ranges.sorted(by: { $0.lowerBound < $1.lowerBound }) {
            if let last = result.last, range.lowerBound <= last.upperBound {
                result[result.count - 1] = last.lowerBound..<max(last.upperBound, range.upperBound)
            } else {
                result.append(range)
            }
        }
        return result
    }

    /// A chunk from `member`, its raw bytes hashed to `sha256` (nil: it did not inflate to its length). One that
    /// matches the sender's digest is stored (and announced once the driver reports it stored), or dropped when its
    /// file ended here meanwhile; one that does not match, or that was never requested, cuts the member off.
    public mutating func relayedChunkArrived(from member: Int, _ chunk: SwarmChunk, sha256: [UInt8]?) -> [Action] {
        guard inSwarm, !peers[member].cutOff else { return [] }
        let requested = peers[member].outstanding.remove(chunk) != nil || peers[member].timedOut.remove(chunk) != nil
        endRequest(chunk, by: member)
        guard requested, let expected = digests[chunk] else {
            return cut(member, reason: .protocolError, chunk: chunk) + schedule()
        }
        guard sha256 == expected else {
            return cut(member, reason: .badChunk, chunk: chunk) + schedule()
        }
        guard !ended[chunk.file] else { return schedule() }  // its file ended here meanwhile: dropped
        guard held.insert(chunk) else { return schedule() }  // came from elsewhere meanwhile: dropped
        storing.insert(chunk)
        pending.remove(chunk)
        if askedSender.remove(chunk) != nil { endRequest(chunk, by: Self.sender) }
        return [.store(chunk)] + schedule()
    }

    /// The driver wrote the relayed chunk of a `store` (or queued it to be written, behind which every read of it
    /// waits): it is held, and announced.
    public mutating func relayedChunkStored(_ chunk: SwarmChunk) -> [Action] {
        guard storing.remove(chunk) != nil else { return [] }
        progressed = true
        failedBy[chunk] = nil
        return inSwarm ? [.announce(chunk)] : []
    }

    /// The driver did not store the relayed chunk of a `store` (its staged file could not be opened, its file or the
    /// transfer ended here): it is not held, so never announced nor served, and asked again unless its file ended.
    public mutating func storeFailed(_ chunk: SwarmChunk) -> [Action] {
        guard storing.remove(chunk) != nil else { return [] }
        held.remove(chunk)
        if !ended[chunk.file], digests[chunk] != nil { pending.insert(chunk) }
        return inSwarm ? schedule() : []
    }

    /// `file` ended here: `published` (every chunk is held and stays served) or failed (none of its chunks is held
    /// any more: what its staged file holds is not served). Nothing of it is asked for any more; requests
    /// outstanding for it free their slots, and a late answer is dropped (not taken as a chunk never requested).
    public mutating func fileEnded(_ file: Int, published: Bool) -> [Action] {
        guard file >= 0, file < ended.count, !ended[file] else { return [] }
        ended[file] = true
        for member in peers.indices {
            let open = peers[member].outstanding.filter { $0.file == file }
            peers[member].outstanding.subtract(open)
            peers[member].timedOut.formUnion(open)
        }
        requestedFrom = requestedFrom.filter { $0.key.file != file }
        askedSender = askedSender.filter { $0.file != file }
        pending = pending.filter { $0.file != file }
        failedBy = failedBy.filter { $0.key.file != file }
        if !published {
            held.removeAll(of: file)
            unverified = unverified.filter { $0.file != file }
            storing = storing.filter { $0.file != file }
        }
        return inSwarm ? schedule() : []
    }

    /// `swarmRefuse` from `member`: the chunk is asked elsewhere. `notHeld` (or an unknown reason) forgets that
    /// `member` has it; `notMember` and `notRelaying` stop all requests to it.
    public mutating func refusalReceived(from member: Int, _ chunk: SwarmChunk, reason: SwarmRefuseReason) -> [Action] {
        guard peers[member].outstanding.remove(chunk) != nil else { return [] }
        endRequest(chunk, by: member)
        switch reason {
        case .notMember, .notRelaying:
            peers[member].refusesAll = true
            forget(member)
        default:
            peers[member].has?.remove(chunk)
            failedBy[chunk, default: []].insert(member)
        }
        return inSwarm ? schedule() : []
    }

    /// The driver's timer for a request to `member` ran out: the chunk is asked elsewhere (a late answer is still
    /// taken).
    public mutating func requestTimedOut(to member: Int, _ chunk: SwarmChunk) -> [Action] {
        guard peers[member].outstanding.remove(chunk) != nil else { return [] }
        endRequest(chunk, by: member)
        peers[member].timedOut.insert(chunk)
        peers[member].has?.remove(chunk)
        failedBy[chunk, default: []].insert(member)
        return inSwarm ? schedule() : []
    }

    /// `swarmRequest` from `member`: serve a chunk held and verified to a member of the list, at most
    /// `maxInFlight` at once; refuse otherwise. A member of the offer that no list named yet is refused `busy`, not
    /// `notMember` (which ends all requests to this member): the sender's lists travel on different links, so its
    /// list may have named this member while this member's list, naming it, is still on its way.
    public mutating func requestReceived(from member: Int, _ chunk: SwarmChunk) -> [Action] {
        let reason: SwarmRefuseReason? =
            if !inSwarm {
                .notRelaying
            } else if member == me || peers[member].cutOff
                || (!peers[member].active && peers[member].wasActive)
            {
                .notMember
            } else if !peers[member].active { .busy } else if !held.isValid(chunk) || !holds(chunk) {
                .notHeld
            } else if peers[member].serving >= maxInFlight { .busy } else { nil }
        if let reason { return [.refuse(chunk, to: member, reason: reason)] }
        peers[member].serving += 1
        return [.serve(chunk, to: member)]
    }

    /// A chunk served to `member` is written to its link.
    public mutating func served(to member: Int) {
        peers[member].serving = max(0, peers[member].serving - 1)
    }

    /// The driver cut `member` off on its own account (it made this member queue more for it than the bound of what
    /// a member that keeps the rules can, PROTOCOL.md 11.11 rule 4): as for a bad chunk, nothing more is asked of it
    /// or served to it and its link is dropped, but no report goes to the sender (no chunk of it was wrong).
    public mutating func cutOff(_ member: Int) -> [Action] {
        guard member != me, member >= 0, member < peers.count, !peers[member].cutOff else { return [] }
        peers[member].cutOff = true
        peers[member].timedOut.removeAll()
        forget(member)
        cutOffMembers.append(member)
        return [.cutOff(member)] + (inSwarm ? schedule() : [])
    }

    /// The driver's periodic check (every request timeout, until this member holds everything): when nothing was
    /// stored since the previous check, the chunks asked of the sender are asked again, and the chunks waiting for
    /// their seed to announce them count as failed by it (asked of the sender unless another member announced them).
    /// A chunk asked of a member has its own timeout (`requestTimedOut`).
    public mutating func progressCheck() -> [Action] {
        defer { progressed = false }
        guard inSwarm, !progressed, !isComplete else { return [] }
        let again = askedSender.sorted().map { Action.requestFromSender($0) }
        for chunk in pending where !isRequested(chunk) {
            if let seed = seeds[chunk] ?? nil { failedBy[chunk, default: []].insert(seed) }
        }
        return again + schedule()
    }

    // MARK: Rules

    private func isUsable(_ member: Int) -> Bool {
        let peer = peers[member]
        return member != me && peer.active && peer.link == .up && !peer.cutOff && !peer.refusesAll
    }

    private func isGone(_ seed: Int?) -> Bool {
        guard let seed else { return true }
        if seed == me { return false }
        let peer = peers[seed]
        return !peer.active || peer.link == .down || peer.cutOff || peer.refusesAll
    }

    /// Forgets `member`'s announcements and outstanding requests (they are scheduled anew).
    @discardableResult
    private mutating func forget(_ member: Int) -> [SwarmChunk] {
        let lost = Array(peers[member].outstanding)
        for chunk in lost { endRequest(chunk, by: member) }
        peers[member].outstanding.removeAll()
        peers[member].has = nil
        return lost
    }

    private mutating func cut(_ member: Int, reason: SwarmReportReason, chunk: SwarmChunk) -> [Action] {
        peers[member].cutOff = true
        peers[member].timedOut.removeAll()
        forget(member)
        cutOffMembers.append(member)
        return [.cutOff(member), .report(offender: member, reason: reason, chunk: chunk)]
    }

    private func isRequested(_ chunk: SwarmChunk) -> Bool {
        requestedFrom[chunk] != nil
    }

    private mutating func endRequest(_ chunk: SwarmChunk, by member: Int) {
        if requestedFrom[chunk] == member { requestedFrom[chunk] = nil }
    }

    /// Fills free request slots, rarest chunk first (of `only`, when given), then, with `askSender`, asks the
    /// sender for chunks nobody can give.
    private mutating func schedule(only: [SwarmChunk]? = nil, askSender: Bool = true) -> [Action] {
        guard inSwarm else { return [] }
        var actions: [Action] = []
        let perMember = peers.indices.reduce(0) { sum, member in
            isUsable(member) ? sum + max(0, maxInFlight - peers[member].outstanding.count) : sum
        }
        let outstanding = peers.reduce(0) { $0 + $1.outstanding.count }
        var free = min(perMember, max(0, maxTotalInFlight - outstanding))
        let usable = peers.indices.filter { isUsable($0) && peers[$0].has != nil }
        func holders(_ chunk: SwarmChunk) -> [Int] { usable.filter { peers[$0].has?.contains(chunk) == true } }
        let wanted = (only ?? Array(pending)).filter { chunk in
            digests[chunk] != nil && !held.contains(chunk) && !isRequested(chunk)
        }
        let ranked = (free > 0 ? wanted : []).map { chunk in (chunk, holders(chunk)) }
            .filter { !$0.1.isEmpty }
            .sorted { ($0.1.count, $0.0) < ($1.1.count, $1.0) }
        for (chunk, holders) in ranked where free > 0 {
            let open = holders.filter { peers[$0].outstanding.count < maxInFlight }
            let count = peers.count
            guard
                let holder = open.min(by: { a, b in
                    (peers[a].outstanding.count, (a - me + count) % count)
                        < (peers[b].outstanding.count, (b - me + count) % count)
                })
            else { continue }
            peers[holder].outstanding.insert(chunk)
            requestedFrom[chunk] = holder
            free -= 1
            actions.append(.request(chunk, from: holder))
        }
        guard askSender else { return actions }
        for chunk in pending.filter({ !isRequested($0) }).sorted() {
            let announced = usable.contains { peers[$0].has?.contains(chunk) == true }
            let seed = seeds[chunk] ?? nil
            if !announced, isGone(seed) || seed.map({ failedBy[chunk, default: []].contains($0) }) == true {
                askedSender.insert(chunk)
                requestedFrom[chunk] = Self.sender
                actions.append(.requestFromSender(chunk))
            }
        }
        return actions
    }
}
