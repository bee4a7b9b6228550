import FerryWire

/// The vocabulary of `SwarmFetcher`: the actions it returns and what it keeps per member.
extension SwarmFetcher {
    /// What the driver must do, in order.
    public enum Action: Equatable, Sendable {
        /// Send `swarmRequest` for the chunk to member `from`.
        case request(SwarmChunk, from: Int)
        /// Send `swarmRequest` for the chunk to the sender.
        case requestFromSender(SwarmChunk)
        /// The relayed chunk matched the sender's digest: write it, acknowledge it `storedFromPeer` once written, and
        /// report the outcome at once: `relayedChunkStored` (written or queued to be: it is announced) or
        /// `storeFailed` (not stored: it is not held).
        case store(SwarmChunk)
        /// Announce the chunk (`swarmHave`) to every member whose link is up.
        case announce(SwarmChunk)
        /// The link to `member` came up: announce everything held and verified (`heldRanges(of:)`) to it.
        case announceAll(to: Int)
        /// Check a chunk of the resumed prefix against the sender's digest (`digest(of:)`), then report
        /// `prefixChecked`.
        case verifyHeld(SwarmChunk)
        /// The chunk of the resumed prefix failed the sender's digest: it is not held, and the transfer must count it
        /// stored no more (`IncomingTransferMachine.storedChunkFailed`), or the copy fetched next would be dropped as
        /// one stored already and asked for again and again. Before any request for it. Only `prefixChecked` emits
        /// it, and the engine's `SwarmMemberships.prefixChecked` carries it out in the same step as the fetcher's
        /// verdict (it never reaches the engine's other actions).
        case unstore(SwarmChunk)
        /// Nothing more to or from `member` in this swarm: drop the swarm link.
        case cutOff(Int)
        /// Send `swarmReport` on `offender` to the sender.
        case report(offender: Int, reason: SwarmReportReason, chunk: SwarmChunk)
        /// Send the chunk (read from staging) to `member`, its transferID field the swarm ID.
        case serve(SwarmChunk, to: Int)
        /// Send `swarmRefuse` for the chunk to `member`.
        case refuse(SwarmChunk, to: Int, reason: SwarmRefuseReason)
        /// This member is no longer in the sender's list: it stops fetching and serving; the sender sends it the rest.
        case leftSwarm
    }

    enum Link { case waiting, up, down }

    struct Peer {
        var active = false
        /// Named by a list before (so a request while not `active` comes from a member the sender removed).
        var wasActive = false
        var link = Link.waiting
        var cutOff = false
        var refusesAll = false
        var outstanding: Set<SwarmChunk> = []
        var timedOut: Set<SwarmChunk> = []
        var serving = 0
        /// The chunks it announced (not forgotten), one bit per chunk of the offer; nil until it announces any.
        var has: ChunkBitmap?
    }
}
