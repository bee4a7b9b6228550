import FerryWire

@testable import FerryStateMachines

/// A deterministic model of a swarm broadcast driving `SwarmSeeder` and `SwarmFetcher`: N receivers and a sender
/// on one switch, every host's link the same speed in both directions (100 Mbit/s in the test bed).
///
/// Time goes in steps of one chunk over one link: each step every host sends at most one chunk and receives at most
/// one (its uplink and downlink), a chunk sent in a step arrives at its end. Each uplink takes, in order, the first
/// queued chunk whose receiver's downlink is still free in that step (rotating which host goes first); the sender
/// takes seeds anew and resends before fresh seeds, and answers to requests and chunks for members out of the swarm
/// (cut off) last, so that a bad relayer's extra copy does not delay the others. Control frames (digests, member
/// lists, announcements, requests, acknowledgements, reports) take no link time. One link-copy of the payload is
/// `chunks` steps.
struct SwarmSimulation {
    struct Outcome: Equatable {
        /// Steps until every receiver still there held every chunk (nil: stalled).
        var steps: Int?
        /// Steps until every receiver still there and not cut off held every chunk.
        var honestSteps: Int?
        /// Chunks the sender's uplink carried.
        var senderChunks: Int
        /// Chunks receivers relayed to each other.
        var relayedChunks: Int
        /// Members cut off, by the members that cut them off.
        var cutOff: Set<Int>
        /// Receivers (still there) that ended with every chunk.
        var complete: Int
    }

    private struct Transmission {
        var to: Int
        var chunk: SwarmChunk
    }

    let receivers: Int
    let chunks: Int
    let window: Int
    /// A receiver whose links all drop at this step.
    var leaver: (member: Int, step: Int)?
    /// A receiver that flips a bit of every chunk it serves.
    var badRelayer: Int?

    static let digest: [UInt8] = Array(repeating: 0xAB, count: 32)
    static let badDigest: [UInt8] = Array(repeating: 0xCD, count: 32)

    init(receivers: Int, chunks: Int, window: Int = 8) {
        self.receivers = receivers
        self.chunks = chunks
        self.window = window
    }

    func run(stepLimit: Int? = nil) -> Outcome {
        var run = Run(model: self)
        return run.go(stepLimit: stepLimit ?? 40 * chunks + 40 * receivers)
    }

    /// Steps for one receiver sent directly, in the same model: the baseline time.
    static func directSteps(chunks: Int) -> Int { chunks }

    private struct Run {
        let model: SwarmSimulation
        var seeder: SwarmSeeder
        var fetchers: [SwarmFetcher]
        var gone: Set<Int> = []
        var direct: Set<Int> = []
        var urgent: [Transmission] = []
        var seedQueue: [Transmission] = []
        var answers: [Transmission] = []
        var uplinks: [[Transmission]]
        var cursor = 0
        var senderChunks = 0
        var relayedChunks = 0
        var cutOff: Set<Int> = []
        var honestSteps: Int?

        init(model: SwarmSimulation) {
            self.model = model
            let size = UInt64(model.chunks) * 1024
            seeder = SwarmSeeder(
                memberCount: model.receivers, sizes: [size], chunkSize: 1024, window: model.window * 1024)
            fetchers = (0..<model.receivers).map {
                SwarmFetcher(
                    me: $0, memberCount: model.receivers, chunkCounts: [model.chunks], accepted: [true],
                    resumedChunks: [0])
            }
            uplinks = Array(repeating: [], count: model.receivers)
        }

        mutating func go(stepLimit: Int) -> Outcome {
            for member in 0..<model.receivers {
                try! seeder.replyReceived(member: member, relay: true, accepted: [true], resumeOffsets: [0])
            }
            perform(seeder.repliesComplete(), queue: \.urgent)
            for member in 0..<model.receivers {
                for other in 0..<model.receivers where other != member {
                    perform(fetchers[member].linkUp(other), at: member)
                }
            }
            for step in 0..<stepLimit {
                if let leaver = model.leaver, leaver.step == step { leave(leaver.member) }
                feedSeeds()
                let deliveries = transmit(step: step)
                for (from, transmission) in deliveries { deliver(transmission, from: from) }
                if honestSteps == nil, isDone(counting: { !cutOff.contains($0) }) { honestSteps = step + 1 }
                if isDone(counting: { _ in true }) { return outcome(steps: step + 1) }
            }
            return outcome(steps: nil)
        }

        func isDone(counting: (Int) -> Bool) -> Bool {
            (0..<model.receivers).allSatisfy {
                gone.contains($0) || !counting($0) || fetchers[$0].isComplete || holdsAll($0)
            }
        }

        /// A member out of the swarm is done when the sender's acknowledgements say it holds everything.
        func holdsAll(_ member: Int) -> Bool {
            seeder.heldCount(of: member) == model.chunks
        }

        func outcome(steps: Int?) -> Outcome {
            let complete = (0..<model.receivers).filter {
                !gone.contains($0) && (fetchers[$0].isComplete || holdsAll($0))
            }
            return Outcome(
                steps: steps, honestSteps: honestSteps, senderChunks: senderChunks, relayedChunks: relayedChunks,
                cutOff: cutOff,
                complete: complete.count)
        }

        /// The sender reads the next chunk while its seed queue is short and a seed has window room.
        mutating func feedSeeds() {
            while cursor < model.chunks, seedQueue.count < 2 {
                let chunk = SwarmChunk(file: 0, index: cursor)
                guard let actions = seeder.seed(chunk) else { return }
                cursor += 1
                perform(actions, queue: \.seedQueue)
                for member in direct.sorted() where !seeder.holds(member, chunk) {
                    answers.append(Transmission(to: member, chunk: chunk))
                }
            }
        }

        /// One step of every uplink; returns what arrives at its end.
        mutating func transmit(step: Int) -> [(from: Int, Transmission)] {
            var downlinkBusy = Set<Int>()
            var deliveries: [(from: Int, Transmission)] = []
            // The sender first, then the receivers from a rotating start.
            for queue in [\Run.urgent, \Run.seedQueue, \Run.answers] {
                if let index = self[keyPath: queue].firstIndex(where: { !downlinkBusy.contains($0.to) }) {
                    let transmission = self[keyPath: queue].remove(at: index)
                    downlinkBusy.insert(transmission.to)
                    senderChunks += 1
                    deliveries.append((from: -1, transmission))
                    break
                }
            }
            for offset in 0..<model.receivers {
                let host = (step + offset) % model.receivers
                guard let index = uplinks[host].firstIndex(where: { !downlinkBusy.contains($0.to) }) else { continue }
                let transmission = uplinks[host].remove(at: index)
                downlinkBusy.insert(transmission.to)
                deliveries.append((from: host, transmission))
            }
            return deliveries
        }

        mutating func deliver(_ transmission: Transmission, from: Int) {
            let to = transmission.to
            guard !gone.contains(to), from == -1 || !gone.contains(from) else { return }
            if from == -1 {
                perform(fetchers[to].senderChunkStored(transmission.chunk), at: to)
                perform(
                    try! seeder.ackReceived(member: to, chunk: transmission.chunk, status: .stored), queue: \.urgent)
                return
            }
            relayedChunks += 1
            fetchers[from].served(to: to)
            let sha = model.badRelayer == from ? SwarmSimulation.badDigest : SwarmSimulation.digest
            perform(fetchers[to].relayedChunkArrived(from: from, transmission.chunk, sha256: sha), at: to)
        }

        mutating func leave(_ member: Int) {
            gone.insert(member)
            uplinks[member].removeAll()
            for queue in [\Run.urgent, \Run.seedQueue, \Run.answers] {
                self[keyPath: queue].removeAll { $0.to == member }
            }
            for other in 0..<model.receivers where other != member {
                uplinks[other].removeAll { $0.to == member }
                perform(fetchers[other].linkDown(member), at: other)
            }
            perform(seeder.memberLeft(member), queue: \.urgent)
        }

        /// Carries out the sender's actions; its chunk sends go to `queue`.
        mutating func perform(_ actions: [SwarmSeeder.Action], queue: WritableKeyPath<Run, [Transmission]>) {
            for action in actions {
                switch action {
                case .announceMembers(let list):
                    for member in 0..<model.receivers where !gone.contains(member) {
                        perform(fetchers[member].membersReceived(list), at: member)
                    }
                case .announceSeed(let chunk, let seed):
                    for member in seeder.activeMembers where !gone.contains(member) {
                        perform(
                            try! fetchers[member].digestsReceived(
                                file: 0, first: chunk.index, entries: [(seed: seed, sha256: SwarmSimulation.digest)]),
                            at: member)
                    }
                case .send(let chunk, let member):
                    self[keyPath: queue].append(Transmission(to: member, chunk: chunk))
                case .serveDirectly(let member):
                    direct.insert(member)
                    for chunk in seeder.missing(of: member) where chunk.index < cursor {
                        answers.append(Transmission(to: member, chunk: chunk))
                    }
                case .sendDigests(let chunks, let member):
                    for chunk in chunks where !gone.contains(member) {
                        perform(
                            try! fetchers[member].digestsReceived(
                                file: 0, first: chunk.index,
                                entries: [(seed: seeder.seed(of: chunk), sha256: SwarmSimulation.digest)]),
                            at: member)
                    }
                case .badRelayer:
                    break
                }
            }
        }

        mutating func perform(_ actions: [SwarmFetcher.Action], at member: Int) {
            for action in actions {
                switch action {
                case .request(let chunk, let holder):
                    perform(fetchers[holder].requestReceived(from: member, chunk), at: holder)
                case .requestFromSender(let chunk):
                    perform(try! seeder.requestReceived(member: member, chunk: chunk), queue: \.answers)
                case .store(let chunk):
                    perform(
                        try! seeder.ackReceived(member: member, chunk: chunk, status: .storedFromPeer), queue: \.urgent)
                    perform(fetchers[member].relayedChunkStored(chunk), at: member)
                case .announce(let chunk):
                    for other in 0..<model.receivers where other != member && !gone.contains(other) {
                        perform(try! fetchers[other].haveReceived(from: member, [chunk]), at: other)
                    }
                case .announceAll(let other):
                    let held = fetchers[member].heldRanges(of: 0).flatMap { $0 }.map { SwarmChunk(file: 0, index: $0) }
                    if !held.isEmpty { perform(try! fetchers[other].haveReceived(from: member, held), at: other) }
                case .verifyHeld, .unstore:
                    break
                case .cutOff(let other):
                    cutOff.insert(other)
                    uplinks[other].removeAll { $0.to == member }
                    uplinks[member].removeAll { $0.to == other }
                    perform(fetchers[other].linkDown(member), at: other)
                case .report(let offender, let reason, let chunk):
                    perform(
                        try! seeder.reportReceived(from: member, offender: offender, reason: reason, chunk: chunk),
                        queue: \.urgent)
                case .serve(let chunk, let other):
                    uplinks[member].append(Transmission(to: other, chunk: chunk))
                case .refuse(let chunk, let other, let reason):
                    perform(fetchers[other].refusalReceived(from: member, chunk, reason: reason), at: other)
                case .leftSwarm:
                    uplinks[member].removeAll()
                }
            }
        }
    }
}
