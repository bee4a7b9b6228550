import FerrySession
import FerryStateMachines
import FerryWire

/// The sender's side of one swarm broadcast (PROTOCOL.md 11.11): the offer's swarm section, the seeder, and the work
/// queued for the seeding loop.
struct SwarmSending: Sendable {
    /// The offer's swarm section.
    var swarm: Swarm
    var seeder: SwarmSeeder
    /// Member index to peer, in the offer's order.
    var members: [PeerID]
    /// Member index to the name a report shows (display name when the send started).
    var names: [String]
    /// The first `swarmMembers` went out (every reply was in, or the sender stopped waiting): a reply after it is
    /// served directly.
    var repliesComplete = false
    /// Ends the wait for slow replies.
    var graceTimer: Task<Void, Never>?
    /// Answers to members' requests, already counted in flight by the seeder, sent after the seeds.
    var answers: [(chunk: SwarmChunk, member: Int)] = []
    /// Members served directly (cut off): the chunks they lack, sent after the seeds as their windows allow.
    var direct: [Int: [SwarmChunk]] = [:]
    /// `corrupt` acknowledgements per member and chunk since it was last stored.
    var corrupt: [Int: [SwarmChunk: Int]] = [:]
    /// Files given up (their source changed): nothing more of them is seeded.
    var abandoned: Set<Int> = []
    /// The seeding loop, suspended until an acknowledgement, a reply or a request changes what it can do.
    var waiter: CheckedContinuation<Void, Never>?
    /// News arrived while the loop was not waiting: its next wait returns at once.
    var news = false

    /// The member index of `peerID`.
    func member(_ peerID: PeerID) -> Int? { members.firstIndex(of: peerID) }
}

/// One frame (or a chunk's header and data) queued for a swarm member's link, with what it counts.
struct SwarmFrame: Sendable {
    var blocks: [[UInt8]]
    /// A chunk's raw bytes (0 for any other frame).
    var rawBytes = 0
    /// A chunk's data bytes on the wire (0 for any other frame).
    var wireBytes = 0
}
