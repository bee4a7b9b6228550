import FerrySession
import FerryStateMachines
import FerryWire

/// The sender's seeding loop of a swarm broadcast (PROTOCOL.md 11.11) and the pumps of its members.
///
/// One loop per send reads each chunk once (from the shared `ChunkSource`, never prefix-compressed: a member's
/// chunks on the sender's link are not consecutive), asks the seeder where it goes, and queues the frames that
/// carry out its answer in each member's outbox: the chunk's digest to every active member that took the file,
/// then the chunk to its seed. Each member's pump sends its outbox in order on its own link, so a slow link holds
/// up only its own frames (the seeder keeps at most a window in flight to each member, counted from the moment it
/// decides a chunk: what waits in its outbox and its link's queue is part of it). Answers to requests and the
/// chunks a member cut off lacks go after the seeds: after each seed (answers) or while no seed can go (windows full,
/// or everything seeded).
extension TransferEngine {
    /// The loop: waits for the first member list, seeds every chunk of every file an active member took, then serves
    /// what is asked for until no member is left.
    func seedLoop(_ id: TransferID) async {
        while operations[id]?.swarm?.repliesComplete == false { await waitForSwarm(id) }
        guard let counts = operations[id]?.swarm?.seeder.chunkCounts, let source = operations[id]?.source,
            let chunkSize = operations[id]?.swarm?.seeder.chunkSize
        else { return }
        files: for file in counts.indices {
            for index in 0..<counts[file] {
                let chunk = SwarmChunk(file: file, index: index)
                // (No copy of the swarm is kept across a suspension: the seeder's next change would copy its bitmaps.)
                guard operations[id]?.cancelled == false,
                    let wanted = operations[id]?.swarm.map({ $0.seeds(file: file) })
                else { return }
                guard wanted, let length = operations[id]?.swarm?.seeder.length(of: chunk) else { continue files }
                let prepared: ChunkSource.Prepared
                do {
                    prepared = try await source.chunk(
                        file: file, offset: UInt64(index) * UInt64(chunkSize), length: length, cycle: nil,
                        prefixAllowed: false)
                } catch .changed {
                    await abandonInSwarm(file, id, await source.failureText(of: file))
                    continue files
                } catch {
                    await cancelOperation(id, reason: .readFailed, detail: error.description)
                    return
                }
                // No global limit here: every chunk queued for a member counts in flight to it from the moment the
                // seeder decides it, so what waits in one member's outbox and link stays within that member's window,
                // and a member that reads slowly holds up only itself (the seeder gives it nothing more).
                var actions: [SwarmSeeder.Action]?
                while true {
                    guard operations[id]?.swarm != nil else { return }
                    // Chunks to seed anew that waited for room go before fresh ones.
                    if let orphans = withSwarm(id, { $0.seeder.seedWaitingOrphans() }), !orphans.isEmpty {
                        await perform(orphans, id)
                        guard operations[id]?.swarm != nil else { return }
                    }
                    actions = withSwarm(id) { $0.seeder.seed(chunk) } ?? nil
                    if actions != nil { break }
                    await serveQueued(id, cutOffToo: true)  // every window is full: what waits behind the seeds
                    await waitForSwarm(id)
                }
                await perform(actions ?? [], id, prepared: (chunk, prepared))
                await serveQueued(id, cutOffToo: false)
            }
        }
        while let operation = operations[id], !operation.cancelled,
            operation.peers.values.contains(where: { $0.machine.isScheduledExternally && $0.machine.phase != .finished }
            )
        {
            await serveQueued(id, cutOffToo: true)
            await waitForSwarm(id)
        }
    }

    /// Sends what waits behind the seeds as far as the members' windows allow: chunks to seed anew, answers to
    /// requests (those that fit when they came, then those that waited for room), and with `cutOffToo` the chunks
    /// members served directly lack.
    func serveQueued(_ id: TransferID, cutOffToo: Bool) async {
        let sends = withSwarm(id) { $0.queuedWork(cutOffToo: cutOffToo) }
        if let sends, !sends.isEmpty { await perform(sends, id) }
    }

    /// Carries out the seeder's actions in order: frames into the members' outboxes, events for reports.
    /// `given` is the chunk the loop just read (others are read, from the source's cache or the file, here).
    func perform(
        _ actions: [SwarmSeeder.Action], _ id: TransferID,
        prepared given: (chunk: SwarmChunk, prepared: ChunkSource.Prepared)? = nil
    ) async {
        var chunks: [SwarmChunk: ChunkSource.Prepared] = [:]
        if let given { chunks[given.chunk] = given.prepared }
        // Only the member and name lists (never changed) are kept across suspensions: a copy of the whole swarm would
        // make the seeder's next change copy its bitmaps.
        guard let members = operations[id]?.swarm?.members, let names = operations[id]?.swarm?.names else { return }
        for (position, action) in actions.enumerated() {
            guard operations[id]?.swarm != nil else { return }
            switch action {
            case .announceMembers(let list):
                let message = SwarmMembers(transferID: id, members: list.map { UInt16($0) })
                let frame = SwarmFrame(blocks: [TransferMessage.swarmMembers(message).frame.encoded()])
                let targets = operations[id]?.swarm?.listTargets ?? []
                for member in targets { queue(frame, to: members[member], id) }
            case .announceSeed(let chunk, let seed):
                guard let prepared = await read(chunk, id, &chunks) else { continue }
                withSwarm(id) { $0.digests[chunk] = prepared.sha256 }
                let digests = ChunkDigests(
                    transferID: id, fileIndex: UInt32(chunk.file), firstChunk: UInt32(chunk.index),
                    entries: [ChunkDigests.Entry(seed: UInt16(seed), sha256: prepared.sha256)])
                let frame = SwarmFrame(blocks: [TransferMessage.chunkDigests(digests).frame.encoded()])
                let targets = operations[id]?.swarm?.digestTargets(file: chunk.file) ?? []
                for member in targets { queue(frame, to: members[member], id) }
                // Kept only for the send of it that follows (a seed that holds the chunk already gets none).
                if position + 1 >= actions.count || actions[position + 1] != .send(chunk, to: seed) {
                    chunks[chunk] = nil
                }
            case .send(let chunk, let member):
                guard let prepared = await read(chunk, id, &chunks),
                    let chunkSize = operations[id]?.swarm?.seeder.chunkSize,
                    let codecs = operations[id]?.peers[members[member]]?.codecs
                else { continue }
                let data = Self.sendable(prepared, codecs: codecs)
                let header = Chunk.frameHeader(
                    transferID: id, fileIndex: UInt32(chunk.file),
                    offset: UInt64(chunk.index) * UInt64(chunkSize), rawLength: UInt32(prepared.rawLength),
                    codec: data.codec, sha256: prepared.sha256, dataLength: data.bytes.count)
                let frame = SwarmFrame(
                    blocks: [header, data.bytes], rawBytes: prepared.rawLength, wireBytes: data.bytes.count)
                queue(frame, to: members[member], id)
                // A chunk is announced, then sent: once sent it is not needed here again. Keeping every chunk of a
                // long list (a leaving member's seeds, all seeded anew) held them all at once: 170 MiB.
                chunks[chunk] = nil
            case .sendDigests(let list, let member):
                for digests in operations[id]?.swarm?.digestFrames(of: list, transferID: id) ?? [] {
                    queue(
                        SwarmFrame(blocks: [TransferMessage.chunkDigests(digests).frame.encoded()]),
                        to: members[member], id)
                }
            case .serveDirectly(let member):
                log(1, "transfer \(id): \(names[member]) is out of the swarm: served directly")
                withSwarm(id) { $0.direct[member] = $0.seeder.missing(of: member) }
                wakeSwarm(id)
            case .badRelayer(let member, let reporter, let reason, let chunk):
                let report = RelayerReport(
                    transferID: id, direction: .sending, offender: names[member],
                    reporter: names[reporter], reason: Self.reportText(reason), fileIndex: chunk.file,
                    chunkIndex: chunk.index)
                log(
                    1,
                    "transfer \(id): \(report.reporter ?? "") reports \(report.offender): \(report.reason) (\(chunk))")
                emit(.relayerCutOff(report))
            }
        }
    }

    /// The chunk, read (and hashed) by the source, or from `chunks`; nil when it could not be read (the file is given
    /// up, or the send cancelled).
    private func read(
        _ chunk: SwarmChunk, _ id: TransferID, _ chunks: inout [SwarmChunk: ChunkSource.Prepared]
    ) async -> ChunkSource.Prepared? {
        if let prepared = chunks[chunk] { return prepared }
        guard let source = operations[id]?.source, let seeder = operations[id]?.swarm?.seeder else { return nil }
        do {
            let prepared = try await source.chunk(
                file: chunk.file, offset: UInt64(chunk.index) * UInt64(seeder.chunkSize),
                length: seeder.length(of: chunk), cycle: nil, prefixAllowed: false)
            chunks[chunk] = prepared
            return prepared
        } catch .changed {
            await abandonInSwarm(chunk.file, id, await source.failureText(of: chunk.file))
        } catch {
            await cancelOperation(id, reason: .readFailed, detail: error.description)
        }
        return nil
    }

    /// Puts a frame in the outbox of a member's pump and wakes it.
    func queue(_ frame: SwarmFrame, to peerID: PeerID, _ id: TransferID) {
        let queued = withPeer(id, peerID) { peer -> Bool in
            guard peer.machine.phase == .sending else { return false }
            peer.outbox.append(frame)
            peer.outboxBytes += frame.wireBytes
            return true
        }
        if queued == true { wake(id, peerID) }
    }

    /// The file changed while it was being sent: nothing more of it is seeded, and every member the loop serves is
    /// told (`fileResult` `sourceChanged`, as the ordinary path does).
    func abandonInSwarm(_ file: Int, _ id: TransferID, _ text: String) async {
        guard withSwarm(id, { $0.abandoned.insert(file).inserted }) == true else { return }
        for (peerID, peer) in operations[id]?.peers ?? [:] where peer.machine.isScheduledExternally {
            await abandon(file, id, peerID, text)
        }
    }

    func waitForSwarm(_ id: TransferID) async {
        await withCheckedContinuation { (continuation: CheckedContinuation<Void, Never>) in
            // No swarm (any more), or news came while the loop was not waiting: it goes on at once.
            if withSwarm(id, { $0.park(continuation) }) != true { continuation.resume() }
        }
    }

    func wakeSwarm(_ id: TransferID) {
        if let waiter = withSwarm(id, { $0.takeWaiter() }) ?? nil { waiter.resume() }
    }

    /// The pump of a member whose chunks the seeding loop schedules: sends its outbox in order, then each file's
    /// `fileEnd` once the member holds the whole file, until every result is in.
    func swarmPump(_ id: TransferID, _ peerID: PeerID) async -> TransferOutcome? {
        while true {
            guard let source = operations[id]?.source else { return nil }
            let next = withPeer(id, peerID) { peer -> SwarmFrame? in
                guard peer.machine.phase == .sending, !peer.outbox.isEmpty else {
                    peer.outbox.removeAll()
                    peer.outboxBytes = 0
                    return nil
                }
                peer.outboxBytes -= peer.outbox[0].wireBytes
                return peer.outbox.removeFirst()
            }
            if let frame = next ?? nil {
                do {
                    try await session.sendTransferFrame(frame.blocks, to: peerID, discardable: id)
                } catch is CancellationError {
                    await failPeer(id, peerID, "\(CancelReason.cancelledByUser)", cancel: .cancelledByUser, detail: "")
                    continue
                } catch {
                    await failPeer(id, peerID, "the link failed (\(error))", cancel: nil)
                    continue
                }
                withPeer(id, peerID) { peer in
                    peer.wireBytes += UInt64(frame.wireBytes)
                    peer.chunkBytes += UInt64(frame.rawBytes)
                }
                if frame.wireBytes > 0 { wakeSwarm(id) }  // room in the outboxes: the loop may read on
                continue
            }
            guard let step = withPeer(id, peerID, { $0.machine.nextStep() }) else { return nil }
            switch step {
            case .finished:
                // A member that published every file it took holds every chunk: it stays in the list, serving the
                // others, while its link is up (PROTOCOL.md 11.11 rule 6); any other end takes it out.
                let completed = withPeer(id, peerID) { $0.failure == nil && $0.filesFailed == 0 } ?? false
                if !completed { await swarmMemberEnded(id, peerID) }
                return finishPeer(id, peerID)
            case .wait, .sendChunk:
                await waitForNews(id, peerID)
            case .sendFileEnd(let file):
                await sendFileEnd(file, id, peerID, source: source, inSwarm: true)
            }
        }
    }
}
