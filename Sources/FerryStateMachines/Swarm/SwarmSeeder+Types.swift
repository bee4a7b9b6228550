import FerryWire

/// The vocabulary of `SwarmSeeder`: the actions it returns, a member's role, and what it keeps per member.
extension SwarmSeeder {
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
        /// Send `member` the digests (with their seeds) of these chunks, seeded before it joined (`chunkDigests`).
        case sendDigests([SwarmChunk], to: Int)
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

    struct Member {
        var role: Role = .pending
        var accepted: [Bool] = []
        var inFlight: [SwarmChunk: Int] = [:]
        var inFlightBytes = 0
        var peakInFlightBytes = 0
        var seededBytes = 0
        /// Bytes of the chunks in `awaitingRelay` it seeds.
        var unrelayedBytes = 0
        /// Chunks it asked for that its window had no room for, in order, each once.
        var requested: [SwarmChunk] = []
        var requestedSet: Set<SwarmChunk> = []
    }
}

extension Array {
    /// The element at `index`, or nil outside the array (indices from a peer's frame).
    subscript(safe index: Int) -> Element? {
        index >= 0 && index < count ? self[index] : nil
    }
}
