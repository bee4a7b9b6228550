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
                var next: [SwarmFetcher.Action]?
                if let (arrived, raw) = relayed, arrived == chunk { next = await storeRelayed(chunk, raw, swarmID) }
                if next == nil { next = withMemberSwarm(swarmID) { $0.fetcher.storeFailed(chunk) } }
                await carryOut(next ?? [], swarmID)
            case .announce(let chunk):
                for member in swarm.links.keys.sorted() { await announce(chunk, to: member, swarmID) }
            case .announceAll(let member):
                guard swarm.links[member] != nil else { continue }
                memberSwarms[swarmID]?.announceFrom[member] = SwarmChunk(file: 0, index: 0)
                await flushAnnouncements(swarmID, member)
            case .verifyHeld(let chunk):
                await verifyHeld(chunk, swarmID)
            case .unstore:
                // Never here: taken in step with the fetcher's verdict (`SwarmMemberships.prefixChecked`).
                assertionFailure("an unstore action reached carryOut")
            case .cutOff(let member):
                stopAnnouncing(to: member, swarmID)
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

    /// A read handle on a file's verified data, or why there is none.
    enum SwarmReader {
        /// Marked in use: hand it back with `releaseReader` once read.
        case open(RegularFile)
        /// Every handle the member may keep open is in use: ask again later.
        case busy
        /// The file is not (or no longer) the file verified here, or cannot be opened.
        case notHeld
    }

    /// A read handle on the verified data of `file`: the open one, or one opened now (closing the least recently used
    /// idle handle when `swarmReadHandles` are open) on the staged file or, once published, on the published one,
    /// relative to the receive directory's descriptors without following symbolic links, and used only when it is
    /// the inode the chunks were verified into (a published file the user renamed, replaced or removed is not held
    /// any more).
    private func acquireReader(_ file: Int, _ swarmID: SwarmID) -> SwarmReader {
        guard let swarm = memberSwarms[swarmID], let directory = receiveDirectory else { return .notHeld }
        if let handle = memberSwarms[swarmID]?.readers.use(file) { return .open(handle) }
        // A resumed prefix checked before anything of its file was written: its staged file is opened now (never
        // for a file that ended here: its staged data must not come back).
        if swarm.readers.identities[file] == nil, let transfer = incoming[swarm.key],
            transfer.files.indices.contains(file), !transfer.files[file].ended
        {
            _ = try? stagedHandle(file, swarm.key)
        }
        guard let readers = memberSwarms[swarmID]?.readers, let identity = readers.identities[file],
            let place = readers.places[file]
        else { return .notHeld }
        guard memberSwarms[swarmID]?.readers.makeRoom(capacity: configuration.swarmReadHandles) == true else {
            return .busy
        }
        let handle: RegularFile
        do throws(SystemError) {
            handle = try Self.openVerified(place, in: directory)
        } catch {
            log(1, "swarm \(swarmID): file \(file) cannot be opened to serve it: \(error)")
            return .notHeld
        }
        guard let status = try? handle.status(), status.kind == .regular, status.device == identity.device,
            status.inode == identity.inode
        else {
            handle.close()
            log(1, "swarm \(swarmID): file \(file) is no longer the file verified here (replaced?): not served")
            return .notHeld
        }
        memberSwarms[swarmID]?.readers.add(file, handle)
        probe.largestSwarmReaders = max(probe.largestSwarmReaders, memberSwarms[swarmID]?.readers.openCount ?? 0)
        return .open(handle)
    }

    /// Opens `place` read-only, one component at a time from the receive directory, never following a symbolic link.
    private static func openVerified(_ place: SwarmReaders.Place, in directory: ReceiveDirectory) throws(SystemError)
        -> RegularFile
    {
        switch place {
        case .staged(let key):
            return try directory.staging.openFile(key, writable: false)
        case .published(let components):
            guard let name = components.last else {
                throw SystemError(call: "open a published file with no name", errno: .invalidArgument)
            }
            var opened: [DirectoryHandle] = []
            defer { for handle in opened { handle.close() } }
            var parent = directory.root
            for component in components.dropLast() {
                parent = try parent.subdirectory(component, create: false)
                opened.append(parent)
            }
            return try parent.openFile(name, writable: false)
        }
    }

    /// Hands back a handle taken with `acquireReader`; then checks the resumed chunks whose check found no handle free
    /// (`verifyHeld`), now that one may be.
    private func releaseReader(_ file: Int, _ swarmID: SwarmID) async {
        memberSwarms[swarmID]?.readers.release(file)
        await retryVerifications(swarmID)
    }

    /// Tests only: takes a read handle on `file` as a chunk being served does (true when one was had), until
    /// `releaseSwarmReader`.
    func useSwarmReader(_ file: Int, _ swarmID: SwarmID) -> Bool {
        if case .open = acquireReader(file, swarmID) { true } else { false }
    }

    /// Tests only: hands back a handle taken with `useSwarmReader`, as a served chunk's read does.
    func releaseSwarmReader(_ file: Int, _ swarmID: SwarmID) async {
        await releaseReader(file, swarmID)
    }

    /// The staged data of `file` was just opened for writing: its inode is the one its chunks are verified into.
    func openSwarmReader(_ file: Int, _ key: IncomingKey) {
        guard let swarmID = incoming[key]?.swarmID, memberSwarms[swarmID] != nil,
            let entry = incoming[key]?.files[file], let staged = entry.staged, let status = try? staged.status()
        else { return }
        memberSwarms[swarmID]?.readers.verified(
            file, SwarmReaders.Identity(device: status.device, inode: status.inode), at: .staged(key: entry.key))
    }

    /// A file of a swarm's transfer was published (`published`) or found already there: it is served from the
    /// published path from now on (the same inode, renamed), or, found already there, from its handle while open.
    func swarmFilePublished(_ file: Int, _ published: PublishedFile?, _ key: IncomingKey) {
        guard let swarmID = incoming[key]?.swarmID, memberSwarms[swarmID] != nil else { return }
        let place: SwarmReaders.Place? =
            if case .published(let name)? = published {
                .published(components: name.split(separator: "/").map(String.init))
            } else { nil }
        memberSwarms[swarmID]?.readers.published(file, at: place)
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
            let digest = swarm.fetcher.digest(of: chunk)
        else {
            withMemberSwarm(swarmID) { $0.fetcher.served(to: member) }
            await refuse(chunk, member, swarmID)
            return
        }
        let reader: RegularFile
        switch acquireReader(chunk.file, swarmID) {
        case .open(let handle): reader = handle
        case .busy:
            withMemberSwarm(swarmID) { $0.fetcher.served(to: member) }
            await refuse(chunk, member, swarmID, reason: .busy)
            return
        case .notHeld:
            withMemberSwarm(swarmID) { $0.fetcher.served(to: member) }
            await refuse(chunk, member, swarmID)
            return
        }
        let length = swarm.length(of: chunk, size: size)
        let offset = UInt64(chunk.index) * UInt64(swarm.chunkSize)
        let bytes = try? await io.run { () throws(SystemError) -> [UInt8] in try reader.read(count: length, at: offset)
        }
        await releaseReader(chunk.file, swarmID)
        // Its file may have failed here while it was read (a write that failed): then it is held no more.
        guard let bytes, bytes.count == length, memberSwarms[swarmID]?.fetcher.holds(chunk) == true else {
            withMemberSwarm(swarmID) { $0.fetcher.served(to: member) }
            await refuse(chunk, member, swarmID)
            return
        }
        let frame = Chunk(
            transferID: swarmID.transferID, fileIndex: UInt32(chunk.file), offset: offset,
            rawLength: UInt32(length), codec: .none, sha256: digest, data: bytes[...])
        // Its slot frees once the chunk is queued: at most K chunks go past the high-water mark checked above.
        let sent = await sendToMember(.chunk(frame), to: peerID)
        withMemberSwarm(swarmID) { $0.fetcher.served(to: member) }
        if sent { memberSwarms[swarmID]?.servedBytes += UInt64(length) }
    }

    private func refuse(
        _ chunk: SwarmChunk, _ member: Int, _ swarmID: SwarmID, reason: SwarmRefuseReason = .notHeld
    ) async {
        guard let peerID = memberSwarms[swarmID]?.links[member] else { return }
        let refuse = SwarmRefuse(
            swarmID: swarmID, fileIndex: UInt32(chunk.file), chunkIndex: UInt32(chunk.index), reason: reason)
        await sendToMember(.swarmRefuse(refuse), to: peerID)
    }

    /// Checks a chunk of the resumed prefix against the sender's digest before it is announced. With every read handle
    /// in use it waits on `verifyLater` and is checked once a handle is handed back (`releaseReader`); with the staged
    /// file gone it stays unchecked: held, neither announced nor served here (the file digest still checks it before
    /// the file is published).
    private func verifyHeld(_ chunk: SwarmChunk, _ swarmID: SwarmID) async {
        memberSwarms[swarmID]?.verifyLater.insert(chunk)
        await retryVerifications(swarmID)
    }

    /// Checks the chunks waiting on `verifyLater`, in order, until none is left or no read handle is free (one check
    /// at a time: a call while one runs returns, and the running one takes what was added meanwhile).
    private func retryVerifications(_ swarmID: SwarmID) async {
        guard let swarm = memberSwarms[swarmID], !swarm.verifyLater.isEmpty, !swarm.verifying else { return }
        memberSwarms[swarmID]?.verifying = true
        while let chunk = memberSwarms[swarmID]?.verifyLater.min() {
            memberSwarms[swarmID]?.verifyLater.remove(chunk)
            guard await checkHeld(chunk, swarmID) else {
                memberSwarms[swarmID]?.verifyLater.insert(chunk)
                break
            }
        }
        memberSwarms[swarmID]?.verifying = false
    }

    /// Checks one chunk of the resumed prefix (`verifyHeld`); false when every read handle is in use (checked nothing).
    private func checkHeld(_ chunk: SwarmChunk, _ swarmID: SwarmID) async -> Bool {
        guard let swarm = memberSwarms[swarmID], let size = incoming[swarm.key]?.files[chunk.file].size else {
            return true
        }
        let reader: RegularFile
        switch acquireReader(chunk.file, swarmID) {
        case .open(let handle): reader = handle
        case .busy: return false
        case .notHeld: return true
        }
        let length = swarm.length(of: chunk, size: size)
        let offset = UInt64(chunk.index) * UInt64(swarm.chunkSize)
        let digest = await accepting.run { () -> [UInt8] in
            guard let bytes = try? reader.read(count: length, at: offset), bytes.count == length else { return [] }
            return FileDigest.chunkDigest(bytes)
        }
        memberSwarms[swarmID]?.readers.release(chunk.file)
        let (actions, unstored) = memberSwarms.prefixChecked(chunk, sha256: digest, swarmID, incoming)
        if unstored {
            log(1, "swarm \(swarmID): resumed \(chunk) does not match the sender's digest; fetching it again")
        }
        await carryOut(actions, swarmID)
        return true
    }

    /// A relayed chunk that matched the sender's digest: written like a chunk from the sender, acknowledged
    /// `storedFromPeer` once written. Returns the fetcher's actions once it is stored (queued to be written, ahead of
    /// any read of it; the transfer machine and the fetcher take it in one step, `SwarmMemberships.storeRelayed`), or
    /// nil when it was not: the transfer is ending or its file ended here, or its staged file cannot be opened, which
    /// fails the file as for a chunk from the sender (`writeFailed`).
    private func storeRelayed(_ chunk: SwarmChunk, _ raw: ArraySlice<UInt8>, _ swarmID: SwarmID) async
        -> [SwarmFetcher.Action]?
    {
        guard let swarm = memberSwarms[swarmID], let digest = swarm.fetcher.digest(of: chunk) else { return nil }
        let key = swarm.key
        let offset = UInt64(chunk.index) * UInt64(swarm.chunkSize)
        // A file that ended here (its staged data perhaps removed) must not get a staged file again.
        guard let transfer = incoming[key], transfer.phase == .receiving, !transfer.isEnding,
            chunk.file < transfer.files.count, !transfer.files[chunk.file].ended
        else { return nil }
        let handle: RegularFile
        do {
            handle = try stagedHandle(chunk.file, key)
        } catch {
            log(1, "swarm \(swarmID): cannot store \(chunk): \(error)")
            await writeFailed(error, file: chunk.file, key)
            return nil
        }
        guard
            let (actions, writeBehind, next) = memberSwarms.storeRelayed(
                chunk, raw: raw.count, digest: digest, swarmID, incoming)
        else { return nil }
        reportIncomingProgress(key)
        let (writeback, failure) = (
            self.writeback, incoming[key]?.files[chunk.file].writebackFailure ?? WritebackFailure()
        )
        let written = incoming[key]?.files[chunk.file].written
        enqueue(actions, key, file: chunk.file) { () throws(SystemError) in
            try handle.write(raw, at: offset)
            written?.add(raw.count)
            try writeBehind.perform(on: handle, writeback, failure: failure)
        }
        return next
    }
}
