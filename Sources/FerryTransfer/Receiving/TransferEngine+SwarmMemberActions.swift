import FerrySession
import FerryStateMachines
import FerrySystem
import FerryWire

/// Carrying out a member's `SwarmFetcher` actions: frames to other members and to the sender, the links between
/// members, request timers, staged reads for serving and for checking a resumed prefix, relayed chunks stored.
extension TransferEngine {
    /// Performs `actions` in order. `relayed` is the chunk whose arrival produced them, with its raw bytes, for a
    /// `store`.
    func carryOut(
        _ actions: [SwarmFetcher.Action], _ swarmID: SwarmID, relayed: (SwarmChunk, ArraySlice<UInt8>)? = nil
    ) async {
        for action in actions {
            guard let swarm = memberSwarms[swarmID] else { return }
            switch action {
            case .request(let chunk, let member):
                // Asked no more meanwhile (its file ended here while an action before this one was carried out).
                guard let peerID = swarm.links[member], swarm.fetcher.outstanding(to: member).contains(chunk) else {
                    continue
                }
                startRequestTimer(chunk, member, swarmID)
                let request = SwarmRequest(
                    swarmID: swarmID, fileIndex: UInt32(chunk.file), chunkIndex: UInt32(chunk.index),
                    codecs: swarmRequestCodecs)
                await sendToMember(.swarmRequest(request), to: peerID)
            case .requestFromSender(let chunk):
                guard swarm.fetcher.requestedFromSender.contains(chunk) else { continue }
                let request = SwarmRequest(
                    swarmID: swarmID, fileIndex: UInt32(chunk.file), chunkIndex: UInt32(chunk.index),
                    codecs: swarmRequestCodecs)
                await send(.swarmRequest(request), to: swarm.key.peer)
            case .store(let chunk):
                // The store's outcome decides the announce: a chunk not stored here is not held, so never served.
                var stored = false
                if let (arrived, raw) = relayed, arrived == chunk { stored = await storeRelayed(chunk, raw, swarmID) }
                let next =
                    withMemberSwarm(swarmID) {
                        stored ? $0.fetcher.relayedChunkStored(chunk) : $0.fetcher.storeFailed(chunk)
                    } ?? []
                await carryOut(next, swarmID)
            case .announce(let chunk):
                let have = SwarmHave(
                    swarmID: swarmID, fileIndex: UInt32(chunk.file),
                    ranges: [UInt64(chunk.index)..<UInt64(chunk.index + 1)])
                for peerID in swarm.links.values { await sendToMember(.swarmHave(have), to: peerID) }
            case .announceAll(let member):
                guard let peerID = swarm.links[member] else { continue }
                for file in 0..<swarm.fetcher.fileCount {
                    let ranges = swarm.fetcher.heldRanges(of: file).map {
                        UInt64($0.lowerBound)..<UInt64($0.upperBound)
                    }
                    for start in stride(from: 0, to: ranges.count, by: Limits.maxSwarmEntriesPerFrame) {
                        let part = Array(ranges[start..<min(ranges.count, start + Limits.maxSwarmEntriesPerFrame)])
                        await sendToMember(
                            .swarmHave(SwarmHave(swarmID: swarmID, fileIndex: UInt32(file), ranges: part)), to: peerID)
                    }
                }
            case .verifyHeld(let chunk):
                await verifyHeld(chunk, swarmID)
            case .unstore(let chunk):
                unstoreResumed(chunk, swarmID)
            case .cutOff(let member):
                if let peerID = memberSwarms[swarmID]?.links.removeValue(forKey: member) {
                    memberSwarms[swarmID]?.linkedMembers[peerID] = nil
                    if await session.peer(peerID)?.isSwarmLink == true { await session.disconnect(peerID) }
                }
            case .report(let offender, let reason, let chunk):
                let report = SwarmReport(
                    transferID: swarm.key.transferID, offender: UInt16(offender), reason: reason,
                    fileIndex: UInt32(chunk.file), chunkIndex: UInt32(chunk.index))
                await send(.swarmReport(report), to: swarm.key.peer)
                let name = swarm.names[offender] ?? swarm.member(offender).deviceID.shortDescription
                log(1, "swarm \(swarmID): member \(name) cut off (\(reason), \(chunk))")
                emit(
                    .relayerCutOff(
                        RelayerReport(
                            transferID: swarm.key.transferID, direction: .receiving, offender: name, reporter: nil,
                            reason: reason == .badChunk
                                ? "a chunk that does not match the sender's digest" : "a chunk it was not asked for",
                            fileIndex: chunk.file, chunkIndex: chunk.index)))
            case .serve(let chunk, let member):
                await serve(chunk, to: member, swarmID)
            case .refuse(let chunk, let member, let reason):
                guard let peerID = swarm.links[member] else { continue }
                let refuse = SwarmRefuse(
                    swarmID: swarmID, fileIndex: UInt32(chunk.file), chunkIndex: UInt32(chunk.index), reason: reason)
                await sendToMember(.swarmRefuse(refuse), to: peerID)
            case .leftSwarm where swarm.done:
                leaveSwarm(swarmID)
                return
            case .leftSwarm:
                log(1, "swarm \(swarmID): this member is no longer in the sender's list; the sender sends the rest")
                withMemberSwarm(swarmID) { swarm in
                    for timer in swarm.timers.values { timer.cancel() }
                    swarm.timers = [:]
                    swarm.progressTimer?.cancel()
                    swarm.progressTimer = nil
                    // It admits no more links from the other members (PROTOCOL.md 11.11 rule 4).
                    if let vouch = swarm.vouch { session.revoke(vouch) }
                    swarm.vouch = nil
                }
            }
        }
    }

    // MARK: Links between members

    /// Dials every member of the list this side has no link to yet (the other side may dial at the same time: the
    /// session keeps one link, PROTOCOL.md 10.4). A member whose address is empty or not a literal IP address is
    /// not dialled; it may still dial this side.
    func dialMembers(_ list: [Int], _ swarmID: SwarmID) {
        guard let swarm = memberSwarms[swarmID] else { return }
        for index in list where index != swarm.me && swarm.links[index] == nil && !swarm.dialing.contains(index) {
            let member = swarm.member(index)
            guard let address = Self.memberAddress(member.address) else { continue }
            memberSwarms[swarmID]?.dialing.insert(index)
            let session = self.session
            Task {
                do {
                    let info = try await session.connect(toMember: member.deviceID, at: address, timeout: .seconds(15))
                    await self.memberDialled(swarmID, index, .success(info.peerID))
                } catch {
                    await self.memberDialled(swarmID, index, .failure(error))
                }
            }
        }
    }

    /// "10.0.0.7:41971" or "[fe80::1%eth0]:41971" as a socket address; nil for anything else (a host name would
    /// need a lookup, which an offer must not make this side do).
    static func memberAddress(_ text: String) -> SocketAddress? {
        guard let colon = text.lastIndex(of: ":") else { return nil }
        var host = String(text[..<colon])
        if host.hasPrefix("["), host.hasSuffix("]") { host = String(host.dropFirst().dropLast()) }
        let bare = host.split(separator: "%", maxSplits: 1).first.map(String.init) ?? host
        guard IPv4Address(bare) != nil || IPv6Address(bare) != nil else { return nil }
        return try? SocketAddress.resolve(text)
    }

    private func memberDialled(_ swarmID: SwarmID, _ index: Int, _ result: Result<PeerID, any Error>) async {
        guard memberSwarms[swarmID]?.dialing.remove(index) != nil else { return }
        switch result {
        case .success(let peerID):
            await memberLinkUp(swarmID, index, peerID)
        case .failure(let error):
            log(1, "swarm \(swarmID): no link to member \(index): \(error)")
            guard memberSwarms[swarmID]?.links[index] == nil else { return }  // it dialled us meanwhile
            let actions = withMemberSwarm(swarmID) { $0.fetcher.linkDown(index) } ?? []
            await carryOut(actions, swarmID)
        }
    }

    /// The link to member `index` is up (dialled, or its first frame arrived).
    func memberLinkUp(_ swarmID: SwarmID, _ index: Int, _ peerID: PeerID) async {
        guard let swarm = memberSwarms[swarmID], swarm.links[index] != peerID else { return }
        if let old = swarm.links[index] { memberSwarms[swarmID]?.linkedMembers[old] = nil }
        memberSwarms[swarmID]?.links[index] = peerID
        memberSwarms[swarmID]?.linkedMembers[peerID] = index
        // The fetcher learns of the link before anything here awaits: a frame of that member handled meanwhile finds
        // the link recorded (`memberIndex`) and must find it up too, or its announcements are ignored, and a member
        // never repeats them (this lost every chunk one member held, now and then, when both dialled each other).
        let actions = withMemberSwarm(swarmID) { $0.fetcher.linkUp(index) } ?? []
        if let name = await session.peer(peerID)?.displayName { memberSwarms[swarmID]?.names[index] = name }
        await carryOut(actions, swarmID)
    }

    // MARK: Requests, serving, storing

    private func startRequestTimer(_ chunk: SwarmChunk, _ member: Int, _ swarmID: SwarmID) {
        let clock = self.clock
        let timer = Task {
            try? await Task.sleep(for: Self.swarmRequestTimeout, clock: clock)
            guard !Task.isCancelled else { return }
            await self.requestTimedOut(chunk, member, swarmID)
        }
        memberSwarms[swarmID]?.timers.updateValue(timer, forKey: chunk)?.cancel()
    }

    /// Checks the fetcher's progress every request timeout until the swarm ends here or this member holds
    /// everything (`lingerInSwarm`, `leaveSwarm` cancel it).
    func startProgressChecks(_ swarmID: SwarmID) {
        let clock = self.clock
        let timer = Task { [weak self] in
            while !Task.isCancelled {
                try? await Task.sleep(for: Self.swarmRequestTimeout, clock: clock)
                guard !Task.isCancelled, let self else { return }
                await self.progressCheck(swarmID)
            }
        }
        memberSwarms[swarmID]?.progressTimer?.cancel()
        memberSwarms[swarmID]?.progressTimer = timer
    }

    private func progressCheck(_ swarmID: SwarmID) async {
        let actions = withMemberSwarm(swarmID) { $0.fetcher.progressCheck() } ?? []
        if !actions.isEmpty { log(1, "swarm \(swarmID): nothing stored for a while: asking the sender") }
        await carryOut(actions, swarmID)
    }

    private func requestTimedOut(_ chunk: SwarmChunk, _ member: Int, _ swarmID: SwarmID) async {
        log(2, "swarm \(swarmID): member \(member) did not answer for \(chunk) in time")
        let actions =
            withMemberSwarm(swarmID) { swarm -> [SwarmFetcher.Action] in
                swarm.timers[chunk] = nil
                return swarm.fetcher.requestTimedOut(to: member, chunk)
            } ?? []
        await carryOut(actions, swarmID)
    }

    /// A read-only handle on the staged data of `file`, opened on first use (before the file is published: the
    /// handle keeps reading the same bytes after).
    private func reader(_ file: Int, _ swarmID: SwarmID) -> RegularFile? {
        guard let swarm = memberSwarms[swarmID], let directory = receiveDirectory,
            let entry = incoming[swarm.key]?.files[file]
        else { return nil }
        if let reader = swarm.readers[file] { return reader }
        guard let reader = try? directory.staging.openFile(entry.key, writable: false) else { return nil }
        memberSwarms[swarmID]?.readers[file] = reader
        return reader
    }

    /// Opens the reader of a file whose staged data was just opened for writing, so that it outlives publication.
    func openSwarmReader(_ file: Int, _ key: IncomingKey) {
        guard let swarmID = incoming[key]?.swarmID, memberSwarms[swarmID] != nil else { return }
        _ = reader(file, swarmID)
    }

    /// A frame to another member, queued without waiting for that member to read: the member engine handles every
    /// link's frames in turn, so a wait on one member that reads slowly, or not at all, would hold up the sender's
    /// chunks and every other member. What is queued to a member stays bounded: small control frames, and chunks
    /// only while its link's queue is below the writer's high-water mark (`serve`); a member that reads nothing is
    /// cut off by the session's stall deadline.
    @discardableResult
    func sendToMember(_ message: TransferMessage, to peerID: PeerID) async -> Bool {
        await send(message, to: peerID, waitForRoom: false)
    }

    /// Serves a verified chunk to a member: read from staging behind the writes queued before (so a chunk written
    /// just now is read as written), sent raw with the sender's digest. Refused `busy` while the member's link holds
    /// its high-water mark unsent: it asks elsewhere, and what waits for it here stays bounded.
    private func serve(_ chunk: SwarmChunk, to member: Int, _ swarmID: SwarmID) async {
        if let peerID = memberSwarms[swarmID]?.links[member], await session.transferQueueIsFull(to: peerID) {
            withMemberSwarm(swarmID) { $0.fetcher.served(to: member) }
            await refuse(chunk, member, swarmID, reason: .busy)
            return
        }
        guard let swarm = memberSwarms[swarmID], let peerID = swarm.links[member],
            chunk.file < swarm.sizes.count, case let size = swarm.sizes[chunk.file],
            let digest = swarm.fetcher.digest(of: chunk),
            let reader = reader(chunk.file, swarmID)
        else {
            withMemberSwarm(swarmID) { $0.fetcher.served(to: member) }
            await refuse(chunk, member, swarmID)
            return
        }
        let length = swarm.length(of: chunk, size: size)
        let offset = UInt64(chunk.index) * UInt64(swarm.chunkSize)
        let bytes = try? await io.run { () throws(SystemError) -> [UInt8] in try reader.read(count: length, at: offset)
        }
        withMemberSwarm(swarmID) { $0.fetcher.served(to: member) }
        // Its file may have failed here while it was read (a write that failed): then it is held no more.
        guard let bytes, bytes.count == length, memberSwarms[swarmID]?.fetcher.holds(chunk) == true else {
            await refuse(chunk, member, swarmID)
            return
        }
        let frame = Chunk(
            transferID: swarmID.transferID, fileIndex: UInt32(chunk.file), offset: offset,
            rawLength: UInt32(length), codec: .none, sha256: digest, data: bytes[...])
        if await sendToMember(.chunk(frame), to: peerID) {
            memberSwarms[swarmID]?.servedBytes += UInt64(length)
        }
    }

    private func refuse(
        _ chunk: SwarmChunk, _ member: Int, _ swarmID: SwarmID, reason: SwarmRefuseReason = .notHeld
    ) async {
        guard let peerID = memberSwarms[swarmID]?.links[member] else { return }
        let refuse = SwarmRefuse(
            swarmID: swarmID, fileIndex: UInt32(chunk.file), chunkIndex: UInt32(chunk.index), reason: reason)
        await sendToMember(.swarmRefuse(refuse), to: peerID)
    }

    /// Checks a chunk of the resumed prefix against the sender's digest before it is announced.
    private func verifyHeld(_ chunk: SwarmChunk, _ swarmID: SwarmID) async {
        guard let swarm = memberSwarms[swarmID], let size = incoming[swarm.key]?.files[chunk.file].size,
            let reader = reader(chunk.file, swarmID)
        else { return }
        let length = swarm.length(of: chunk, size: size)
        let offset = UInt64(chunk.index) * UInt64(swarm.chunkSize)
        let digest = await accepting.run { () -> [UInt8] in
            guard let bytes = try? reader.read(count: length, at: offset), bytes.count == length else { return [] }
            return FileDigest.chunkDigest(bytes)
        }
        let actions = withMemberSwarm(swarmID) { $0.fetcher.prefixChecked(chunk, sha256: digest) } ?? []
        await carryOut(actions, swarmID)
    }

    /// A chunk of the resumed prefix that failed the sender's digest: the transfer counts it stored no more (its
    /// digest leaves the file's, its bytes the resumed ones), so the copy fetched next is stored, acknowledged and
    /// hashed into the file digest in its place.
    private func unstoreResumed(_ chunk: SwarmChunk, _ swarmID: SwarmID) {
        guard let swarm = memberSwarms[swarmID] else { return }
        let offset = UInt64(chunk.index) * UInt64(swarm.chunkSize)
        let dropped =
            withIncoming(swarm.key) { transfer -> Bool in
                guard chunk.file < transfer.files.count,
                    transfer.machine?.storedChunkFailed(file: chunk.file, offset: offset) == true
                else { return false }
                transfer.files[chunk.file].chunkDigests[chunk.index] = nil
                let length = UInt64(swarm.length(of: chunk, size: transfer.files[chunk.file].size))
                transfer.resumedBytes -= min(length, transfer.resumedBytes)
                return true
            } ?? false
        if dropped {
            log(1, "swarm \(swarmID): resumed \(chunk) does not match the sender's digest; fetching it again")
        }
    }

    /// A relayed chunk that matched the sender's digest: written like a chunk from the sender, acknowledged
    /// `storedFromPeer` once written. Returns whether it was stored (queued to be written, ahead of any read of it):
    /// false when the transfer is ending or its file ended here, or when its staged file cannot be opened, which
    /// fails the file as for a chunk from the sender (`writeFailed`).
    private func storeRelayed(_ chunk: SwarmChunk, _ raw: ArraySlice<UInt8>, _ swarmID: SwarmID) async -> Bool {
        guard let swarm = memberSwarms[swarmID], let digest = swarm.fetcher.digest(of: chunk) else { return false }
        let key = swarm.key
        let offset = UInt64(chunk.index) * UInt64(swarm.chunkSize)
        // A file that ended here (its staged data perhaps removed) must not get a staged file again.
        guard let transfer = incoming[key], transfer.phase == .receiving, !transfer.isEnding,
            chunk.file < transfer.files.count, !transfer.files[chunk.file].ended
        else { return false }
        let handle: RegularFile
        do {
            handle = try stagedHandle(chunk.file, key)
        } catch {
            log(1, "swarm \(swarmID): cannot store \(chunk): \(error)")
            await writeFailed(error, file: chunk.file, key)
            return false
        }
        let stored =
            withIncoming(key) { transfer -> ([IncomingTransferMachine.Action], WriteBehind)? in
                guard transfer.phase == .receiving, !transfer.isEnding,
                    (try? transfer.machine?.chunkArrived(file: chunk.file, offset: offset, rawLength: raw.count))
                        == .process,
                    let actions = transfer.machine?.chunkStored(
                        file: chunk.file, offset: offset, rawLength: raw.count, fromPeer: true),
                    !actions.isEmpty
                else { return nil }
                transfer.bytesDone += UInt64(raw.count)
                transfer.wireBytes += UInt64(raw.count)
                transfer.files[chunk.file].stored += UInt64(raw.count)
                transfer.files[chunk.file].chunkDigests[chunk.index] = digest
                transfer.currentFile = chunk.file
                let size = transfer.files[chunk.file].size
                return (actions, WriteBehind.after(writing: raw.count, at: offset, fileSize: size))
            } ?? nil
        guard let (actions, writeBehind) = stored else { return false }
        memberSwarms[swarmID]?.relayedBytes += UInt64(raw.count)
        reportIncomingProgress(key)
        let (writeback, failure) = (
            self.writeback, incoming[key]?.files[chunk.file].writebackFailure ?? WritebackFailure()
        )
        enqueue(actions, key, file: chunk.file) { () throws(SystemError) in
            try handle.write(raw, at: offset)
            try writeBehind.perform(on: handle, writeback, failure: failure)
        }
        return true
    }
}
