import FerryStateMachines
import FerryWire

/// The seeding loop's state changes and questions, on the sender's swarm record: what is seeded, what waits behind
/// the seeds, who gets which frame, and the loop's wait for news. The loop itself (reads, frames, outboxes) is the
/// engine's (`TransferEngine+SwarmSeeding`).
extension SwarmSending {
    /// Whether the chunks of `file` are seeded: it was not given up, and an active member took it.
    func seeds(file: Int) -> Bool {
        !abandoned.contains(file) && seeder.activeMembers.contains { seeder.takes($0, file: file) }
    }

    /// What waits behind the seeds, as far as the members' windows allow: chunks to seed anew, answers to requests
    /// (those that fit when they came, then those that waited for room), and with `cutOffToo` the chunks members
    /// served directly lack. Taken: the caller sends them.
    mutating func queuedWork(cutOffToo: Bool) -> [SwarmSeeder.Action] {
        var actions = seeder.seedWaitingOrphans()
        actions += answers.map { SwarmSeeder.Action.send($0.chunk, to: $0.member) }
        answers.removeAll()
        actions += seeder.answerWaitingRequests()
        guard cutOffToo else { return actions }
        for member in direct.keys.sorted() {
            var queue = direct[member] ?? []
            var taken = 0
            while taken < queue.count, let served = seeder.serve(queue[taken], to: member) {
                actions += served
                taken += 1
            }
            queue.removeFirst(taken)
            direct[member] = queue.isEmpty ? nil : queue
        }
        return actions
    }

    /// The members a member list goes to: those in the swarm and those cut off from it (served directly).
    var listTargets: [Int] { members.indices.filter { [.active, .cutOff].contains(seeder.role(of: $0)) } }

    /// The members a chunk's digest goes to: the active members that took its file.
    func digestTargets(file: Int) -> [Int] { seeder.activeMembers.filter { seeder.takes($0, file: file) } }

    /// The `chunkDigests` frames of `list` for a member that joins late: the chunks whose digests were announced, in
    /// runs of consecutive chunks of one file, at most `maxSwarmEntriesPerFrame` a frame.
    func digestFrames(of list: [SwarmChunk], transferID: TransferID) -> [ChunkDigests] {
        var runs: [[SwarmChunk]] = []
        for chunk in list where digests[chunk] != nil {
            if let last = runs.last?.last, last.file == chunk.file, last.index + 1 == chunk.index,
                runs[runs.count - 1].count < Limits.maxSwarmEntriesPerFrame
            {
                runs[runs.count - 1].append(chunk)
            } else {
                runs.append([chunk])
            }
        }
        return runs.map { run in
            let entries = run.map { chunk in
                ChunkDigests.Entry(
                    seed: seeder.seed(of: chunk).map { UInt16($0) } ?? ChunkDigests.noSeed,
                    sha256: digests[chunk] ?? [])
            }
            return ChunkDigests(
                transferID: transferID, fileIndex: UInt32(run[0].file), firstChunk: UInt32(run[0].index),
                entries: entries)
        }
    }

    // MARK: The loop's wait for news

    /// The loop is about to wait: keeps `continuation` to be resumed by the next news and returns true, or, news having
    /// come while the loop was not waiting, takes that news and returns false (the caller resumes it at once).
    mutating func park(_ continuation: CheckedContinuation<Void, Never>) -> Bool {
        guard !news else {
            news = false
            return false
        }
        waiter = continuation
        return true
    }

    /// News for the loop (an acknowledgement, a reply, a request): its waiter, taken, for the caller to resume; or,
    /// when it is not waiting, the news kept for its next wait.
    mutating func takeWaiter() -> CheckedContinuation<Void, Never>? {
        guard let waiting = waiter else {
            news = true
            return nil
        }
        waiter = nil
        return waiting
    }
}
