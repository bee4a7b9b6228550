import FerrySession
import FerryStateMachines
import FerrySystem
import FerryWire

/// What a member queues for another member (PROTOCOL.md 11.11 rule 4, issue 27 point 6): the bound on its own frames
/// on that link, the member cut off past it, and its announcements, which wait while the link is full and then go
/// out as ranges.
extension TransferEngine {
    /// Bytes past the writer's high-water mark that a link to a member may hold unsent for the small frames
    /// (refusals, requests, one `swarmHave` of ranges) queued while it is that full.
    static let memberControlAllowance = 256 << 10

    /// The most bytes of member frames (`Session.sendMemberFrame`) a link to another member may hold unsent before this
    /// member queues one more for it: the writer's high-water mark (chunks are served only while the link holds less
    /// than that, and announcements are queued only then), K chunks of the largest chunk size of the swarms it is in
    /// (served while the link was below that mark), and `memberControlAllowance`. Only this member's frames to that
    /// member count, not the link's other traffic (plain transfers either way, app messages), which waits for room on
    /// its own and may hold the link past the mark: it makes chunks refused `busy` and announcements wait, never the
    /// member cut off. A member that keeps the rules (at most K requests outstanding to this one, PROTOCOL.md 11.11
    /// rule 4) cannot make its link hold more, whatever it reads; one that does is cut off (`memberQueueFull`).
    func memberQueueLimit(for peerID: PeerID) -> Int {
        let chunk = memberSwarms.all.values.filter { $0.linkedMembers[peerID] != nil }.map(\.chunkSize).max()
        return Session.transferQueueHighWater + Limits.maxSwarmRequestsInFlight * (chunk ?? Limits.maxChunkSize)
            + Self.memberControlAllowance
    }

    /// What became of a frame for another member.
    enum MemberQueueing {
        /// Queued for its link.
        case queued
        /// Not queued: its link would have held more than the limit unsent.
        case full
        /// Not queued: the member's link is gone.
        case gone
    }

    /// A frame to another member, queued without waiting for that member to read: the member engine handles every
    /// link's frames in turn, so a wait on one member that reads slowly, or not at all, would hold up the sender's
    /// chunks and every other member. What is queued to a member stays bounded: chunks are served only while its
    /// link's queue is below the writer's high-water mark (`serve`), announcements are queued only then (`announce`),
    /// and once the member frames its link holds unsent would pass `memberQueueLimit` nothing more is queued: the
    /// member is cut off in every swarm it is linked in (a member that asks faster than it reads fails alone). False
    /// when the frame was not queued.
    @discardableResult
    func sendToMember(_ message: TransferMessage, to peerID: PeerID) async -> Bool {
        switch await queueForMember(message, to: peerID) {
        case .queued: return true
        case .gone: return false
        case .full:
            await memberQueueFull(peerID)
            return false
        }
    }

    /// Queues `message` for `peerID` unless the member frames its link holds unsent would then be more than
    /// `memberQueueLimit`, or, `belowHighWater`, unless the link holds the writer's high-water mark or more unsent
    /// (whoever queued it; the frame may then take it past the mark). Acknowledgements held for that peer go first, in
    /// the same queue entry, as in `send`.
    func queueForMember(_ message: TransferMessage, to peerID: PeerID, belowHighWater: Bool = false) async
        -> MemberQueueing
    {
        let held = incoming.takeHeldAcks(for: peerID)
        let limit = memberQueueLimit(for: peerID)
        do {
            guard
                let queued = try await session.sendMemberFrame(
                    held + [message.frame.encoded()], to: peerID, limit: limit, belowHighWater: belowHighWater)
            else {
                incoming.putBack(held, for: peerID)
                return .full
            }
            if !held.isEmpty { probe.ackEntries += 1 }
            probe.largestMemberQueue = max(probe.largestMemberQueue, queued)
            return .queued
        } catch {
            log(2, "could not send \(message.frame.kind) to \(peerID): \(error)")
            return .gone
        }
    }

    /// The link to `peerID` holds `memberQueueLimit` bytes of member frames unsent: the member at its end asks faster
    /// than it reads (or reads nothing). It is cut off in every swarm it is linked in here: nothing more is asked of it
    /// or served to it, and its swarm link is dropped.
    private func memberQueueFull(_ peerID: PeerID) async {
        for swarmID in memberSwarms.all.keys.sorted(by: { $0.description < $1.description }) {
            guard let member = memberSwarms[swarmID]?.linkedMembers[peerID] else { continue }
            let name = memberSwarms[swarmID]?.names[member] ?? "\(member)"
            log(
                1,
                "swarm \(swarmID): member \(name) cut off: its link holds \(memberQueueLimit(for: peerID)) bytes or"
                    + " more of frames to it as a member unsent (it asks faster than it reads)")
            let actions = withMemberSwarm(swarmID) { $0.fetcher.cutOff(member) } ?? []
            await carryOut(actions, swarmID)
        }
    }

    // MARK: Announcements

    /// Announces `chunk` to `member`: one `swarmHave` while its link holds less than the writer's high-water mark (the
    /// condition `Session.waitForTransferRoom` waits for, so that a wait never returns to a link that still refuses);
    /// otherwise, and while announcements to it wait already, everything held from `chunk` on is announced to it
    /// again once its link has room (`flushAnnouncements`): what waits for a member that reads slowly is one position,
    /// not a frame a chunk.
    func announce(_ chunk: SwarmChunk, to member: Int, _ swarmID: SwarmID) async {
        guard let swarm = memberSwarms[swarmID], let peerID = swarm.links[member] else { return }
        if let from = swarm.announceFrom[member] {
            if chunk < from { memberSwarms[swarmID]?.announceFrom[member] = chunk }
            return
        }
        let have = SwarmHave(
            swarmID: swarmID, fileIndex: UInt32(chunk.file), ranges: [UInt64(chunk.index)..<UInt64(chunk.index + 1)])
        switch await queueForMember(.swarmHave(have), to: peerID, belowHighWater: true) {
        case .queued, .gone: return
        case .full:
            let from = memberSwarms[swarmID]?.announceFrom[member].map { min($0, chunk) } ?? chunk
            memberSwarms[swarmID]?.announceFrom[member] = from
            awaitRoom(for: member, peerID, swarmID)
        }
    }

    /// Announces to `member` everything held from its `announceFrom` position on, as ranges (up to 1024 a frame),
    /// while its link holds less than the writer's high-water mark; when it holds that or more, waits for room and goes
    /// on from where it stopped.
    func flushAnnouncements(_ swarmID: SwarmID, _ member: Int) async {
        while let swarm = memberSwarms[swarmID], let from = swarm.announceFrom[member] {
            guard let peerID = swarm.links[member] else {
                stopAnnouncing(to: member, swarmID)
                return
            }
            guard let (file, ranges) = Self.heldRanges(swarm.fetcher, from: from) else {
                memberSwarms[swarmID]?.announceFrom[member] = nil
                return
            }
            let part = Array(ranges.prefix(Limits.maxSwarmEntriesPerFrame))
            // Taken before the await: a chunk announced meanwhile lowers the position again.
            memberSwarms[swarmID]?.announceFrom[member] = SwarmChunk(file: file, index: part.last?.upperBound ?? 0)
            let have = SwarmHave(
                swarmID: swarmID, fileIndex: UInt32(file),
                ranges: part.map { UInt64($0.lowerBound)..<UInt64($0.upperBound) })
            switch await queueForMember(.swarmHave(have), to: peerID, belowHighWater: true) {
            case .queued: continue
            case .gone: return
            case .full:
                let start = SwarmChunk(file: file, index: part.first?.lowerBound ?? 0)
                let now = memberSwarms[swarmID]?.announceFrom[member].map { min($0, start) } ?? start
                memberSwarms[swarmID]?.announceFrom[member] = now
                awaitRoom(for: member, peerID, swarmID)
                return
            }
        }
    }

    /// The first file at or after `from` with chunks held at or after `from`, and those runs.
    private static func heldRanges(_ fetcher: SwarmFetcher, from: SwarmChunk) -> (Int, [Range<Int>])? {
        for file in from.file..<fetcher.fileCount {
            let start = file == from.file ? from.index : 0
            let ranges = fetcher.heldRanges(of: file).compactMap { range -> Range<Int>? in
                range.upperBound > start ? max(range.lowerBound, start)..<range.upperBound : nil
            }
            if !ranges.isEmpty { return (file, ranges) }
        }
        return nil
    }

    /// Calls `flushAnnouncements` for `member` once its link has room (one wait at a time).
    private func awaitRoom(for member: Int, _ peerID: PeerID, _ swarmID: SwarmID) {
        guard memberSwarms[swarmID]?.roomWaiters[member] == nil else { return }
        let session = self.session
        let waiter = Task { [weak self] in
            let room = await session.waitForTransferRoom(to: peerID)
            guard !Task.isCancelled, let self else { return }
            await self.roomCameBack(room, for: member, swarmID)
        }
        memberSwarms[swarmID]?.roomWaiters[member] = waiter
        probe.announcementWaits += 1
    }

    /// The wait for room on `member`'s link ended: announcements go on, or, the link ending (`room` false), stop until
    /// a link to it comes up again (a full queue whose writer ended would never drain).
    private func roomCameBack(_ room: Bool, for member: Int, _ swarmID: SwarmID) async {
        memberSwarms[swarmID]?.roomWaiters[member] = nil
        guard room else {
            stopAnnouncing(to: member, swarmID)
            return
        }
        await flushAnnouncements(swarmID, member)
    }

    /// Nothing more is announced to `member` until its link comes up again (`announceAll`).
    func stopAnnouncing(to member: Int, _ swarmID: SwarmID) {
        memberSwarms[swarmID]?.announceFrom[member] = nil
        memberSwarms[swarmID]?.roomWaiters.removeValue(forKey: member)?.cancel()
    }
}
