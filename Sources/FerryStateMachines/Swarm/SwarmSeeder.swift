import FerryWire

/// The sender's side of a swarm broadcast: which member seeds each chunk, what each member holds, and what the
/// sender must do when a member leaves or is cut off (PROTOCOL.md 11.11, docs/ARCHITECTURE.md "Swarm scheduler").
///
/// Pure and deterministic: the driver reports replies, acknowledgements, requests, reports and lost links; the
/// returned actions say which frames to send. Members are the indices of the offer's member list. Only members
/// that replied `relay` take part; the others (and members that leave the swarm) are served by the ordinary
/// per-peer path, and `serveDirectly` says when one joins it.
///
/// The seeding rule: each chunk goes from the sender to exactly one member, its seed, chosen among the active members
/// that took the file and lack the chunk: the one with the fewest bytes in flight on the sender's link plus bytes it
/// seeded that nobody relayed yet (`unrelayedBytes`: so a slow member, whose acknowledgements come late, and a member
/// that does not pass its chunks on, seed less), ties to the one that seeded fewer bytes, then the lower index. A
/// chunk every taker holds already (resumed prefixes) is not sent: one of them is its seed. A resumed prefix is a
/// claim: it never makes a member the seed of a chunk another member lacks.
///
/// The bounds: every chunk the sender sends a member (a seed, a seed anew, a copy after `corrupt`, an answer to a
/// request, direct service) counts in flight to that member from the moment it is decided until it is acknowledged,
/// and never more than `window` bytes are in flight to one member, whatever it asks for; what does not fit waits here
/// as chunk indices (requests per member, deduplicated; chunks to seed anew), never as data, and goes when an
/// acknowledgement makes room (`waitingSends()`).
public struct SwarmSeeder: Sendable {
    /// The offer's chunk size.
    public let chunkSize: Int
    /// Bytes the sender keeps in flight to one member at most.
    public let window: Int
    let sizes: [UInt64]
    private(set) var members: [Member]
    private(set) var holdings: [ChunkBitmap]
    /// Chunks each member holds, per file (so that "holds the whole file" is not a walk over its bitmap).
    private(set) var heldPerFile: [[Int]]
    private(set) var seeds: [SwarmChunk: Int] = [:]
    /// Chunks held only by a resumed prefix's claim, per member (no acknowledgement of them came).
    private var claimed: [ChunkBitmap]
    /// Chunks sent to their seed that another active taker lacks and that no other member stored from a peer yet: chunk
    /// indices per file (so that a file's result rechecks only that file's).
    private var awaitingRelay: [Set<Int>]
    /// Orphaned chunks (their seed left) that no member had room for: seeded anew, before fresh chunks, when one has.
    private var waitingReseeds: [SwarmChunk] = []
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
        claimed = holdings
        awaitingRelay = Array(repeating: [], count: sizes.count)
        heldPerFile = Array(repeating: Array(repeating: 0, count: sizes.count), count: memberCount)
    }

    /// Records that `member` holds `chunk`; false when it did already.
    @discardableResult
    private mutating func insertHolding(_ member: Int, _ chunk: SwarmChunk) -> Bool {
        guard holdings[member].insert(chunk) else { return false }
        heldPerFile[member][chunk.file] += 1
        return true
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
        insertPrefixes(of: member, accepted: accepted, resumeOffsets: resumeOffsets)
    }

    /// Member `member` replied with `relay` after the first list went out (a person slow to accept): it joins the
    /// swarm now, so that it catches up from the other members and not only from the sender. The new list goes to
    /// every member, then the digests of every chunk seeded so far of the files it took go to it; from then on it
    /// seeds like the others. A resumed prefix counts as held. Throws for a second reply or decisions of the wrong
    /// count.
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
        members[member].role = .active
        insertPrefixes(of: member, accepted: accepted, resumeOffsets: resumeOffsets)
        let seeded = seeds.keys.filter { accepted[$0.file] }.sorted()
        return announceIfChanged() + (seeded.isEmpty ? [] : [.sendDigests(seeded, to: member)])
    }

    /// A resumed prefix is held: whole chunks up to the resume offset, and every chunk of a file resumed at its end.
    private mutating func insertPrefixes(of member: Int, accepted: [Bool], resumeOffsets: [UInt64]) {
        for file in sizes.indices where accepted[file] {
            let held =
                resumeOffsets[file] >= sizes[file]
                ? chunkCounts[file] : Int(resumeOffsets[file] / UInt64(chunkSize))
            for index in 0..<held {
                let chunk = SwarmChunk(file: file, index: index)
                if insertHolding(member, chunk) { claimed[member].insert(chunk) }
            }
        }
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

    /// The next chunk read from the source: where it goes. Nil when no member that lacks it has room in its window and
    /// none holds it (try again after an acknowledgement); an empty list when no active member took the file (the
    /// per-peer path sends it).
    public mutating func seed(_ chunk: SwarmChunk) -> [Action]? {
        precondition(holdings[0].isValid(chunk), "seed(\(chunk)): no such chunk")
        let takers = activeMembers.filter { members[$0].accepted[chunk.file] }
        guard !takers.isEmpty else { return [] }
        let lacking = takers.filter { !holdings[$0].contains(chunk) }
        guard !lacking.isEmpty else {
            seeds[chunk] = takers[0]
            return [.announceSeed(chunk, seed: takers[0])]
        }
        if let seed = pickSeed(among: lacking, length: length(of: chunk)) { return assign(chunk, to: seed) }
        // Every member that lacks it has a full window: a member that holds it (acknowledged first, else by its claim)
        // is its seed and nothing is sent, so the broadcast goes on; the members that lack it fetch it from that seed,
        // or ask the sender (their requests wait for room in their own windows), at their own pace.
        let holders = takers.filter { holdings[$0].contains(chunk) }
        guard let holder = holders.first(where: { !claimed[$0].contains(chunk) }) ?? holders.first else { return nil }
        seeds[chunk] = holder
        return [.announceSeed(chunk, seed: holder)]
    }

    /// The seed among `candidates` (which lack the chunk) that have room in their windows: the fewest bytes in flight
    /// plus unrelayed bytes, then the fewest seeded, then the lowest index. (Unrelayed bytes order the candidates and
    /// exclude none: when a chunk of one member does not reach another, the sender cannot tell which of the two fails,
    /// and a member that fetches nothing must not stop the others' seeds.)
    private func pickSeed(among candidates: [Int], length: Int) -> Int? {
        candidates.filter { members[$0].inFlightBytes + length <= window }.min { a, b in
            (members[a].inFlightBytes + members[a].unrelayedBytes, members[a].seededBytes, a) < (
                members[b].inFlightBytes + members[b].unrelayedBytes, members[b].seededBytes, b
            )
        }
    }

    private mutating func assign(_ chunk: SwarmChunk, to seed: Int) -> [Action] {
        seeds[chunk] = seed
        let length = length(of: chunk)
        members[seed].seededBytes += length
        if needsRelay(chunk, from: seed) {
            awaitingRelay[chunk.file].insert(chunk.index)
            members[seed].unrelayedBytes += length
        }
        return [.announceSeed(chunk, seed: seed)] + sendDirect(chunk, to: seed)
    }

    /// Whether an active member other than `seed` took the chunk's file and lacks it.
    private func needsRelay(_ chunk: SwarmChunk, from seed: Int) -> Bool {
        members.indices.contains { member in
            member != seed && members[member].role == .active && (members[member].accepted[safe: chunk.file] ?? false)
                && !holdings[member].contains(chunk)
        }
    }

    /// `chunk` no longer waits to be relayed from its seed (it was, nobody needs it any more, or it is seeded anew).
    private mutating func relayDone(_ chunk: SwarmChunk) {
        guard awaitingRelay[chunk.file].remove(chunk.index) != nil, let seed = seeds[chunk] else { return }
        members[seed].unrelayedBytes -= length(of: chunk)
    }

    /// Drops from `awaitingRelay` the chunks (of `file`, or of every file) no active member lacks any more (a member
    /// left, was cut off or ended a file).
    private mutating func recheckRelays(file: Int? = nil) {
        for file in file.map({ [$0] }) ?? Array(awaitingRelay.indices) {
            for index in awaitingRelay[file] {
                let chunk = SwarmChunk(file: file, index: index)
                if !needsRelay(chunk, from: seeds[chunk] ?? -1) { relayDone(chunk) }
            }
        }
    }

    /// Counts `chunk` in flight to `member` and sends it; a chunk in flight to it already is not sent twice. The
    /// caller made sure it fits the window.
    private mutating func sendDirect(_ chunk: SwarmChunk, to member: Int) -> [Action] {
        guard members[member].inFlight[chunk] == nil else { return [] }
        let length = length(of: chunk)
        members[member].inFlight[chunk] = length
        members[member].inFlightBytes += length
        members[member].peakInFlightBytes = max(members[member].peakInFlightBytes, members[member].inFlightBytes)
        sentBytes += length
        return [.send(chunk, to: member)]
    }

    /// Whether `chunk` fits `member`'s window now.
    private func fits(_ chunk: SwarmChunk, _ member: Int) -> Bool {
        members[member].inFlightBytes + length(of: chunk) <= window
    }

    /// Sends `chunk` to `member` (an answer, a copy after `corrupt`) when its window has room; else it waits, once, in
    /// the member's queue of requests (as an index, not as data).
    private mutating func sendOrQueue(_ chunk: SwarmChunk, to member: Int) -> [Action] {
        guard members[member].inFlight[chunk] == nil else { return [] }
        guard fits(chunk, member), members[member].requested.isEmpty else {
            if members[member].requestedSet.insert(chunk).inserted { members[member].requested.append(chunk) }
            return []
        }
        return sendDirect(chunk, to: member)
    }

    /// What waited for room and fits now, in order: `seedWaitingOrphans()`, then `answerWaitingRequests()`.
    public mutating func waitingSends() -> [Action] {
        seedWaitingOrphans() + answerWaitingRequests()
    }

    /// Chunks to seed anew that waited for room (their seed left while every window was full), as far as windows
    /// allow: the digest with the new seed, then the chunk to it. The driver calls it before each fresh chunk and after
    /// acknowledgements.
    public mutating func seedWaitingOrphans() -> [Action] {
        var actions: [Action] = []
        var still: [SwarmChunk] = []
        for chunk in waitingReseeds {
            guard let reseeded = reseed(chunk) else {
                still.append(chunk)
                continue
            }
            actions += reseeded
        }
        waitingReseeds = still
        return actions
    }

    /// Each member's requests and copies that waited for room in its window, in order, as far as its window allows
    /// (one that no longer applies, a chunk it holds or a file it ended, is dropped).
    public mutating func answerWaitingRequests() -> [Action] {
        var actions: [Action] = []
        for member in members.indices where !members[member].requested.isEmpty {
            var taken = 0
            while taken < members[member].requested.count {
                let chunk = members[member].requested[taken]
                let wanted =
                    (members[member].role == .active || members[member].role == .cutOff)
                    && (members[member].accepted[safe: chunk.file] ?? false) && !holdings[member].contains(chunk)
                    && members[member].inFlight[chunk] == nil
                if wanted {
                    guard fits(chunk, member) else { break }
                    actions += sendDirect(chunk, to: member)
                }
                members[member].requestedSet.remove(chunk)
                taken += 1
            }
            members[member].requested.removeFirst(taken)
        }
        return actions
    }

    /// `member` acknowledged `chunk`: `stored` (sent by the sender), `storedFromPeer` (relayed), or `corrupt`
    /// (send it again, when its window has room). Throws for a chunk outside the offer, a `stored` one the sender did
    /// not send to an active member, a `storedFromPeer` from a member outside the swarm, or another status.
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
            gained(member, chunk)
            return []
        case .storedFromPeer:
            guard members[member].role == .active || members[member].role == .cutOff else {
                throw TransferProtocolError("member \(member), not in the swarm, stored \(chunk) from a peer")
            }
            if insertHolding(member, chunk) { relayedBytes += length(of: chunk) }
            claimed[member].remove(chunk)
            // Evidence that the chunk's seed passes it on (or that another member relayed it for the seed): a member
            // cut off is not believed.
            if members[member].role == .active, seeds[chunk] != member { relayDone(chunk) }
            gained(member, chunk)
            return []
        case .corrupt:
            guard let length = members[member].inFlight.removeValue(forKey: chunk) else {
                throw TransferProtocolError("member \(member) found \(chunk) corrupt, which was not sent to it")
            }
            members[member].inFlightBytes -= length
            // A member cut off is served directly: it gets the chunk again as an active one does.
            return members[member].role == .active || members[member].role == .cutOff
                ? sendOrQueue(chunk, to: member) : []
        default:
            throw TransferProtocolError("unknown chunk status \(status.rawValue)")
        }
    }

    /// `member` holds `chunk` now (acknowledged): no longer claimed only, and a chunk nobody else lacks any more no
    /// longer waits to be relayed.
    private mutating func gained(_ member: Int, _ chunk: SwarmChunk) {
        insertHolding(member, chunk)
        claimed[member].remove(chunk)
        if awaitingRelay[chunk.file].contains(chunk.index), let seed = seeds[chunk], !needsRelay(chunk, from: seed) {
            relayDone(chunk)
        }
    }

    /// `member` asked the sender for `chunk` (its seed is gone and nobody announced it): sent when its window has
    /// room (the driver queues these behind fresh chunks), else kept, once, as an index until it has
    /// (`waitingSends()`). Throws for a member outside the swarm or a chunk outside its files; a chunk it holds or
    /// already has coming is not sent twice, and one whose digest did not go out yet not at all.
    public mutating func requestReceived(member: Int, chunk: SwarmChunk) throws(TransferProtocolError) -> [Action] {
        guard members[member].role == .active || members[member].role == .cutOff else {
            throw TransferProtocolError("a swarm request from member \(member), which is not in the swarm")
        }
        guard holdings[member].isValid(chunk), members[member].accepted[chunk.file] else {
            throw TransferProtocolError("member \(member) asked for \(chunk), which it did not take")
        }
        guard seeds[chunk] != nil else { return [] }
        // A chunk held only by the member's resumed claim: its copy failed the digest there (an honest member asks
        // for nothing it holds). The claim goes and the chunk is sent; ignored, the member would wait for ever.
        if claimed[member].contains(chunk) {
            claimed[member].remove(chunk)
            if holdings[member].remove(chunk) { heldPerFile[member][chunk.file] -= 1 }
        }
        guard !holdings[member].contains(chunk) else { return [] }
        return sendOrQueue(chunk, to: member)
    }

    /// Sends `chunk` to `member`, which is served directly (cut off): nil while its window is full (try again after
    /// an acknowledgement), an empty list when it holds the chunk or has it coming already.
    public mutating func serve(_ chunk: SwarmChunk, to member: Int) -> [Action]? {
        guard holdings[member].isValid(chunk), members[member].accepted[safe: chunk.file] ?? false,
            !holdings[member].contains(chunk), members[member].inFlight[chunk] == nil
        else { return [] }
        guard fits(chunk, member) else { return nil }
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
        recheckRelays(file: file)
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
        members[member].requested.removeAll()
        members[member].requestedSet.removeAll()
        recheckRelays()
        guard wasActive else { return [] }
        return reseedOrphans(of: member) + announceIfChanged()
    }

    /// `reporter` reported `offender` (PROTOCOL.md 11.11): counted and named; an active offender is cut off (out of
    /// the swarm, served directly from now on), its orphaned chunks seeded anew. A report from a member that is no
    /// longer active (cut off, or left) is ignored: it may have been in flight, and a member cut off must not take
    /// honest members with it. Throws for a reporter that never was in the swarm or an offender index outside the
    /// offer.
    public mutating func reportReceived(
        from reporter: Int, offender: Int, reason: SwarmReportReason, chunk: SwarmChunk
    ) throws(TransferProtocolError) -> [Action] {
        switch members[reporter].role {
        case .active: break
        case .cutOff, .left: return []
        case .pending, .outside:
            throw TransferProtocolError("a swarm report from member \(reporter), which is not in the swarm")
        }
        guard offender >= 0, offender < members.count, offender != reporter else {
            throw TransferProtocolError("a swarm report on member \(offender) from member \(reporter)")
        }
        reports[offender, default: 0] += 1
        var actions: [Action] = [.badRelayer(member: offender, reporter: reporter, reason: reason, chunk: chunk)]
        guard members[offender].role == .active else { return actions }
        members[offender].role = .cutOff
        recheckRelays()
        actions += reseedOrphans(of: offender) + announceIfChanged()
        actions.append(.serveDirectly(member: offender))
        return actions
    }

    /// Chunks seeded to `member` that no active member holds get a new seed: the digest with the new seed goes out
    /// before the new member list, so a member that reads the list already knows where each chunk comes from. A chunk
    /// no member has room for now waits (`waitingSends()`); meanwhile a member that lacks it asks the sender.
    private mutating func reseedOrphans(of member: Int, file: Int? = nil) -> [Action] {
        var actions: [Action] = []
        for chunk in seeds.keys.sorted() where seeds[chunk] == member && (file == nil || chunk.file == file) {
            guard let reseeded = reseed(chunk) else {
                if !waitingReseeds.contains(chunk) { waitingReseeds.append(chunk) }
                continue
            }
            actions += reseeded
        }
        return actions
    }

    /// A new seed for `chunk`, whose seed is gone: a member that holds it by acknowledgement (the digest names it, no
    /// chunk is sent), else one that lacks it, by the seeding rule; nil when none has room now. An empty list when no
    /// active member took the file, or no active member still lacks it.
    private mutating func reseed(_ chunk: SwarmChunk) -> [Action]? {
        if let seed = seeds[chunk], members[seed].role == .active, members[seed].accepted[safe: chunk.file] ?? false {
            return []  // seeded anew already (a chunk waited, and its old seed came back into use in the meantime)
        }
        let takers = activeMembers.filter { members[$0].accepted[chunk.file] }
        let lacking = takers.filter { !holdings[$0].contains(chunk) }
        guard !takers.isEmpty, !lacking.isEmpty else { return [] }
        relayDone(chunk)
        if let holder = takers.first(where: { holdings[$0].contains(chunk) && !claimed[$0].contains(chunk) }) {
            seeds[chunk] = holder
            return [.announceSeed(chunk, seed: holder)]
        }
        guard let seed = pickSeed(among: lacking, length: length(of: chunk)) else { return nil }
        return assign(chunk, to: seed)
    }

    private mutating func announceIfChanged() -> [Action] {
        let active = activeMembers
        guard active != announced else { return [] }
        announced = active
        return [.announceMembers(active)]
    }
}
