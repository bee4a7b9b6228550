import FerrySession
import FerryStateMachines
import FerrySystem
import FerryWire

/// This engine's part in one swarm broadcast as a member (PROTOCOL.md 11.11): the offer's member list, the fetcher,
/// the links to other members, the requests waiting for an answer, and what was relayed each way.
struct MemberSwarm: Sendable {
    /// The transfer with the sender that named this swarm.
    let key: IncomingKey
    /// The sender, as that transfer knew it (named in `TransferEvent.swarmEnded`).
    let sender: PeerInfo
    let swarmID: SwarmID
    /// The offer's member list and this member's index in it.
    let members: [SwarmMember]
    let me: Int
    let chunkSize: Int
    /// The offer's file sizes (serving outlives the transfer's record).
    let sizes: [UInt64]
    var fetcher: SwarmFetcher
    /// The transfer with the sender ended with every file published: this member holds every chunk and only serves,
    /// until the sender's list leaves it out or its link to the sender is lost.
    var done = false
    /// The session's vouch for the other members (revoked when the swarm ends here).
    var vouch: VouchToken?
    /// Links up to other members, by index, and the other way round.
    var links: [Int: PeerID] = [:]
    var linkedMembers: [PeerID: Int] = [:]
    /// The display names of members this side linked up with (named in the output when cut off).
    var names: [Int: String] = [:]
    /// Members being dialled now.
    var dialing: Set<Int> = []
    /// The timer of each request outstanding to a member.
    var timers: [SwarmChunk: Task<Void, Never>] = [:]
    /// Calls the fetcher's `progressCheck()` every request timeout while this member fetches (so that it never
    /// waits forever on a seed's announcement or the sender's answer).
    var progressTimer: Task<Void, Never>?
    /// The read handles to serve chunks from, opened on demand, at most `TransferConfiguration.swarmReadHandles`.
    var readers = SwarmReaders()
    /// Chunks of the resumed prefix whose check against the sender's digest found every read handle in use: checked
    /// once one is handed back (`retryVerifications`); and whether a check of them runs now.
    var verifyLater: Set<SwarmChunk> = []
    var verifying = false
    /// Raw bytes stored from other members, and served to them.
    var relayedBytes: UInt64 = 0
    var servedBytes: UInt64 = 0
    /// Members whose link held the writer's high-water mark unsent when a chunk was to be announced to them: from
    /// this chunk on, everything held is announced to them again (as ranges) once their link has room, instead of one
    /// frame a chunk queued behind what they do not read (`flushAnnouncements`). The wait for that room, by member.
    var announceFrom: [Int: SwarmChunk] = [:]
    var roomWaiters: [Int: Task<Void, Never>] = [:]
    /// Which member addresses this member dials (made at the first dial), and each member's dials so far with the
    /// last one's time (`SwarmDialPolicy`).
    var dialPolicy: SwarmDialPolicy?
    var dials: [Int: (count: Int, last: ContinuousClock.Instant)] = [:]

    /// The member at `index` in the offer's list.
    func member(_ index: Int) -> SwarmMember { members[index] }

    /// Raw bytes of `chunk` in a file of `size` bytes.
    func length(of chunk: SwarmChunk, size: UInt64) -> Int {
        let offset = UInt64(chunk.index) * UInt64(chunkSize)
        return Int(min(UInt64(chunkSize), size - min(offset, size)))
    }
}

/// Codecs a member asks other members for: none of them depends on another chunk (no `zstdPrefixed`).
let swarmRequestCodecs: CodecSet = [.zlib, .zstd]
