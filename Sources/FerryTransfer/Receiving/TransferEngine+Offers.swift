import FerrySession
import FerryStateMachines
import FerrySystem
import FerryWire

extension TransferEngine {
    /// Answers an offer waiting under `OfferPolicy.ask`. Unknown or already answered offers are ignored.
    ///
    /// The answer is taken at once, whenever it comes after the `offerReceived` event (the ask is registered before
    /// the event is emitted), and carried out by a task of its own, so that the caller does not wait for the staged
    /// data of a resumed file to be hashed.
    ///
    /// A denial goes to the sender with `reason` and `detail` (PROTOCOL.md 11.4): `deniedByUser` when the person
    /// said no, another reason when the application denied without asking (e.g. `tooManyOffers` past its prompt
    /// rate), so that the sender is told the true reason.
    public func respond(
        to transferID: TransferID, from peerID: PeerID, accept: Bool, reason: OfferDenyReason = .deniedByUser,
        detail: String = ""
    ) {
        let key = IncomingKey(peer: peerID, transferID: transferID)
        guard let ask = incoming.asks.removeValue(forKey: key) else { return }
        ask.timer.cancel()
        Task { await self.answered(key, accept: accept, denial: (reason, detail)) }
    }

    /// `foreignDigests`: the offer of a foreign peer (`ForeignPeer.offer`), with each file's SHA-256 or nil; its files
    /// are verified by that digest or their size, and staged under random names (no resume).
    func offerReceived(_ offer: Offer, from peerID: PeerID, foreignDigests: [[UInt8]?]? = nil) async {
        let key = IncomingKey(peer: peerID, transferID: offer.transferID)
        // An ID that ended here recently (answered, withdrawn, cancelled) is not offered again either: a sender that
        // cancels and offers again under the same ID while its first offer is being accepted would otherwise get the
        // second taken with the first one's answer.
        guard incoming[key] == nil, !incoming.hasEnded(key) else {
            await violation(by: peerID, "transfer \(offer.transferID) offered twice")
            return
        }
        guard let info = await peerInfo(peerID) else { return }
        guard receiveDirectory != nil, !isStopped else {
            await deny(offer, to: peerID, .notAccepting, "this peer does not receive files")
            return
        }
        // A session that lets in pinned peers only takes offers from pinned peers only, whatever `offerPolicy` says:
        // a peer unpinned while its link was open (its link is being closed) offers nothing more.
        guard session.configuration.acceptPolicy != .trusted || info.isTrusted else {
            await deny(offer, to: peerID, .notAccepting, "this device is no longer trusted here")
            return
        }
        var files: [IncomingFile] = []
        var seen = Set<String>()
        for (index, file) in offer.files.enumerated() {
            // Validated in the form it will be published in (NFC), so that its length is checked as written.
            switch NameValidator.components(of: ReceiveDirectory.publishedForm(file.path)) {
            case .failure(let error):
                await deny(offer, to: peerID, .invalidOffer, "file \(index + 1): \(error)")
                return
            case .success(let components):
                let joined = components.joined(separator: "/")
                guard seen.insert(joined).inserted else {
                    await deny(offer, to: peerID, .invalidOffer, "file \(index + 1): the name is offered twice")
                    return
                }
                if let foreignDigests {
                    var foreign = IncomingFile(components: components, size: file.size, key: Self.foreignStagedKey())
                    foreign.verification = foreignDigests[index] == nil ? .size : .sha256
                    foreign.givenSHA256 = foreignDigests[index] ?? []
                    files.append(foreign)
                } else {
                    files.append(
                        IncomingFile(
                            components: components, size: file.size,
                            key: ResumeKey.make(sender: info.deviceID, file: file, chunkSize: offer.chunkSize)))
                }
                if let memory = configuration.memoryDelivery, memory.takes(file) {
                    files[files.count - 1].inMemory = true
                    files[files.count - 1].alsoPublish = memory.alsoPublish
                }
            }
        }
        // The folders section: each folder validated as a file name is, none named twice or as a file.
        var folders: [[String]] = []
        for (index, folder) in offer.folders.enumerated() {
            switch NameValidator.components(of: ReceiveDirectory.publishedForm(folder)) {
            case .failure(let error):
                await deny(offer, to: peerID, .invalidOffer, "folder \(index + 1): \(error)")
                return
            case .success(let components):
                guard seen.insert(components.joined(separator: "/")).inserted else {
                    await deny(offer, to: peerID, .invalidOffer, "folder \(index + 1): the name is offered twice")
                    return
                }
                folders.append(components)
            }
        }
        var total: UInt64 = 0
        for file in offer.files {
            let (sum, overflow) = total.addingReportingOverflow(file.size)
            guard !overflow else {
                await deny(offer, to: peerID, .invalidOffer, "the file sizes add up to more than 2^64 bytes")
                return
            }
            total = sum
        }
        var transfer = IncomingTransfer(
            offer: offer, peer: info, phase: .asking, machine: nil, files: files, folders: folders,
            meter: ProgressMeter(interval: configuration.progressInterval), started: clock.now)
        transfer.generation = incoming.nextGeneration()
        transfer.keepsStaged = foreignDigests == nil
        switch configuration.offerPolicy {
        case .none:
            await deny(offer, to: peerID, .deniedByUser, "this peer accepts no files")
        case .all:
            incoming[key] = transfer
            await acceptSoon(key, offer)
        case .trusted where !info.isTrusted:
            await deny(offer, to: peerID, .nobodyToAsk, "")
        case .trusted:
            incoming[key] = transfer
            await acceptSoon(key, offer)
        case .ask:
            incoming[key] = transfer
            let deadline = clock.now + configuration.askTimeout
            // The ask exists before anyone hears of the offer: an answer given the moment the event arrives (a
            // trusted peer's, an automatic denial) finds it, however the tasks are scheduled.
            let timer = Task { [clock] in
                try? await Task.sleep(until: deadline, clock: clock)
                guard !Task.isCancelled else { return }
                await self.answerTimedOut(key)
            }
            incoming.asks[key] = PendingAsk(deadline: deadline, timer: timer)
            emit(
                .offerReceived(
                    IncomingOffer(
                        transferID: offer.transferID, peer: info, files: offer.files,
                        totalBytes: total, deadline: deadline)))
        }
    }

    /// Carries out the answer to an asked offer (or its timeout), unless the offer went away meanwhile.
    private func answered(
        _ key: IncomingKey, accept: Bool, denial: (reason: OfferDenyReason, detail: String)
    ) async {
        guard let transfer = incoming[key], transfer.phase == .asking, !transfer.isEnding else { return }
        if accept, !isStopped {
            await acceptOffer(key)
        } else {
            incoming[key] = nil
            await deny(transfer.offer, to: key.peer, denial.reason, denial.detail)
        }
    }

    private func answerTimedOut(_ key: IncomingKey) async {
        guard incoming.asks.removeValue(forKey: key) != nil else { return }
        await answered(key, accept: false, denial: (.noAnswer, "nobody answered in time"))
    }

    func deny(_ offer: Offer, to peerID: PeerID, _ reason: OfferDenyReason, _ detail: String) async {
        log(1, "denied transfer \(offer.transferID) from \(peerID): \(reason) \(detail)")
        if let info = await peerInfo(peerID) {
            emit(
                .denied(
                    transferID: offer.transferID, peer: info, direction: .receiving,
                    reason: Self.denialText(reason, detail)))
        }
        let reply = OfferReply(
            transferID: offer.transferID, accepted: false, reason: reason, detail: Self.detail(detail), codecs: [],
            files: [])
        await send(.offerReply(reply), to: peerID)
    }

    /// Accepts every file of an offer, resuming from staged data where there is some, if the space is there.
    ///
    /// Each file's staged data is reserved for this transfer before anything is awaited (see `StagedReservation`):
    /// two transfers of one file from one sender (two `ferry send` runs, `send` beside `watch`), or another
    /// `ferry receive` on this directory, never write one staged file together; the later one is denied as busy.
    /// Every await below is followed by a check that the transfer is still waiting for this acceptance; if not, the
    /// reservations are released.
    func acceptOffer(_ key: IncomingKey) async {
        guard let offered = incoming[key], !offered.isEnding, let directory = receiveDirectory else { return }
        let generation = offered.generation
        /// The record under `key` is still the offer being accepted, waiting for this acceptance.
        func isStillThisOffer() -> Bool {
            guard let now = incoming[key] else { return false }
            // A foreign peer's offer also needs its peer still attached: one being detached takes no transfer.
            guard !key.peer.isForeign || isAttached(key.peer) else { return false }
            return now.generation == generation && now.phase == .asking && !now.isEnding && !isStopped
        }
        var reservations: [StagedReservation] = []
        func refuse(_ reason: OfferDenyReason, _ detail: String) async {
            reservations.forEach { $0.release() }
            incoming[key] = nil
            await deny(offered.offer, to: key.peer, reason, detail)
        }
        let chunk = UInt64(offered.offer.chunkSize)
        var plans: [(key: String, resume: UInt64)] = []
        for file in offered.files {
            let name = file.components.joined(separator: "/")
            do {
                guard let reservation = try directory.reserveStaged(key: file.key) else {
                    // Held by a transfer stopped here whose outcome waits for its queued writes (a sender that
                    // cancelled and sends again at once): answered once that one ended, within its bound.
                    if let ending = endingHolder(of: file.key) {
                        reservations.forEach { $0.release() }
                        incoming.parkedOffers[ending, default: []].append(key)
                        return
                    }
                    await refuse(.busy, "\(name) is being received from this sender now; send it again when that ends")
                    return
                }
                reservations.append(reservation)
                // Staged data to resume from is locked against other processes now, before it is read.
                var resume: UInt64 = 0
                if let staged = directory.stagedLength(key: file.key), staged > 0 {
                    guard try reservation.lockAcrossProcesses() else {
                        await refuse(
                            .busy, "\(name) is being received from this sender by another receiver into this directory")
                        return
                    }
                    let length = directory.stagedLength(key: file.key) ?? 0  // as locked
                    resume = ResumePlan.offset(stagedLength: length, size: file.size, chunkSize: chunk)
                }
                plans.append((file.key, resume))
            } catch {
                log(1, "cannot reserve the staged data of \(name) in \(directory.path): \(error)")
                await refuse(.notAccepting, "the receiver cannot stage \(name)")
                return
            }
        }
        // The staged prefixes are read back and hashed chunk by chunk on the accepting queue (gigabytes, for a large
        // resumed file), not behind other transfers' queued writes, so that the file digest covers the whole file;
        // one that cannot be read starts over.
        let planned = plans
        let held = reservations
        let chunkSize = Int(chunk)
        // A swarm member keeps its prefix's chunk digests by chunk (see the reply below).
        let keep = configuration.relay && offered.offer.swarm != nil
        // Files the offer gives a digest of, not resumed, delivered to disk, outside a swarm: the receiver may hold
        // them already (PROTOCOL.md 11.10 rule 10); each is hashed only when a file of its size is there, within the
        // sender's `AlreadyThereBudget`, on a queue of this offer's own (no other peer's acceptance waits behind
        // it), stopped between chunks when the sender leaves or cancels (`hashStop`).
        let candidates: [(index: Int, components: [String], size: UInt64, digest: [UInt8])] =
            offered.offer.swarm != nil
            ? []
            : offered.files.indices.compactMap { index in
                let file = offered.files[index]
                guard let digest = offered.offer.fileDigests[index], plans[index].resume == 0, !file.inMemory,
                    file.size > 0
                else { return nil }
                return (index, file.components, file.size, digest)
            }
        let alreadyThere = await findHeld(candidates, key, in: directory, chunkSize: chunkSize)
        await waitAtAcceptGate(key)
        guard isStillThisOffer() else {
            reservations.forEach { $0.release() }  // cancelled or stopped while held files were hashed
            probe.acceptancesStopped += 1
            return
        }
        let hashers = await accepting.run { () -> [FileDigest?] in
            zip(planned, held).map { plan, reservation -> FileDigest? in
                guard plan.resume > 0 else { return nil }
                guard
                    let hasher = try? Self.hashStagedPrefix(
                        key: plan.key, length: plan.resume, chunkSize: chunkSize, directory: directory,
                        reservation: reservation, keepingChunkDigests: keep)
                else {
                    return nil  // resumed from 0: the first write cuts the staged file (still held) to 0
                }
                return hasher
            }
        }
        guard isStillThisOffer(), var transfer = incoming[key], transfer.files.count == reservations.count else {
            reservations.forEach { $0.release() }  // cancelled or stopped while the prefixes were hashed
            probe.acceptancesStopped += 1
            return
        }
        var needed: UInt64 = 0
        for index in transfer.files.indices {
            transfer.files[index].accepted = true
            transfer.files[index].reservation = reservations[index]
            transfer.files[index].resumeOffset = hashers[index] == nil ? 0 : plans[index].resume
            if transfer.files[index].verification == .fileDigest {
                transfer.files[index].hasher = hashers[index] ?? FileDigest()
            } else {
                // A foreign peer's file: one SHA-256 over its bytes as they are taken, never resumed.
                transfer.files[index].wholeHasher = SHA256Hasher()
                transfer.files[index].resumeOffset = 0
            }
            if let found = alreadyThere[index], let digest = transfer.offer.fileDigests[index] {
                // Nothing to send but its `fileEnd`: answered at its size, as a file staged whole (rule 10).
                transfer.files[index].alreadyThere = (found, digest)
                transfer.files[index].resumeOffset = transfer.files[index].size
                transfer.files[index].hasher = nil
            }
            transfer.resumedBytes += transfer.files[index].resumeOffset
            needed += transfer.files[index].size - transfer.files[index].resumeOffset  // sizes were summed at the offer
        }
        if let available = directory.availableBytes(), needed > available {
            // The receiver's log names its directory; the sender is not told where the files would have gone.
            log(1, "not enough space in \(directory.path): \(Self.mebibytes(available)) free")
            await refuse(
                .insufficientSpace,
                "the files need \(Self.mebibytes(needed)) and the receiving directory has "
                    + "\(Self.mebibytes(available)) free")
            return
        }
        // The offer's folders, before any file and only for an offer that is taken (none for one refused above):
        // the sender's reply finds them there (PROTOCOL.md 11.3).
        let folders = offered.folders
        let madeFolders = folders.isEmpty ? [] : await accepting.run { directory.createFolders(folders) }
        guard isStillThisOffer() else {
            reservations.forEach { $0.release() }  // cancelled or stopped while the folders were made
            probe.acceptancesStopped += 1
            return
        }
        for case .failure(let error) in madeFolders {
            log(1, "cannot create a folder offered by \(transfer.peer.displayName): \(error)")
        }
        transfer.foldersMade = madeFolders.count { if case .success = $0 { true } else { false } }
        transfer.foldersFailed = madeFolders.count - transfer.foldersMade
        transfer.acceptedCount = transfer.files.filter(\.accepted).count
        transfer.totalBytes = transfer.files.reduce(0) { $0 + ($1.accepted ? $1.size : 0) }
        transfer.codecs = transfer.offer.codecs.intersection(Self.localCodecs)
        transfer.phase = .receiving
        // A member of the offer's swarm takes chunks in any order: from the sender and from other members.
        let relay = joinsSwarm(transfer.offer)
        transfer.machine = IncomingTransferMachine(
            sizes: transfer.files.map(\.size), accepted: transfer.files.map(\.accepted),
            resumeOffsets: transfer.files.map(\.resumeOffset), chunkSize: Int(transfer.offer.chunkSize),
            anyOrder: relay)
        if relay {
            // A member's resumed chunk can fail the sender's digest and be fetched again (PROTOCOL.md 11.11): its
            // prefix's digests are kept by chunk, as those of the chunks it stores later, so that a chunk stored
            // again replaces its digest; the file digest is fed them all in chunk order once the file is complete.
            for index in transfer.files.indices {
                guard let kept = transfer.files[index].hasher?.chunkDigests, !kept.isEmpty else { continue }
                let length = FileDigest.length
                for chunk in 0..<kept.count / length {
                    transfer.files[index].chunkDigests[chunk] = Array(kept[chunk * length..<(chunk + 1) * length])
                }
                transfer.files[index].hasher = FileDigest()
            }
        }
        transfer.started = clock.now
        incoming[key] = transfer
        if relay {
            await joinSwarm(key)
            guard incoming[key] != nil else { return }  // cancelled while the session vouched for the members
        }
        log(1, "accepted transfer \(key.transferID) from \(transfer.peer.displayName): \(transfer.files.count) files")
        let reply = OfferReply(
            transferID: key.transferID, accepted: true, reason: OfferDenyReason(rawValue: 0), detail: "",
            codecs: transfer.codecs,
            files: transfer.files.map { FileDecision(accepted: $0.accepted, resumeOffset: $0.resumeOffset) },
            relay: relay)
        emit(
            .started(
                transferID: key.transferID, peer: transfer.peer, direction: .receiving, files: transfer.offer.files,
                accepted: transfer.files.map(\.accepted), resumeOffsets: transfer.files.map(\.resumeOffset)))
        await send(.offerReply(reply), to: key.peer)
    }

    /// Hashes the bytes already staged for a file, chunk by chunk as the sender cuts them, so that the prefix feeds
    /// the file digest exactly as received chunks do (PROTOCOL.md 11.10 rule 8): the file locked by `reservation`,
    /// as it must still be. A prefix changed on disk gives other chunk digests, so the file fails its digest.
    private static func hashStagedPrefix(
        key: String, length: UInt64, chunkSize: Int, directory: ReceiveDirectory, reservation: StagedReservation,
        keepingChunkDigests: Bool = false
    ) throws -> FileDigest {
        let (file, existing) = try directory.stagedFile(key: key, holding: reservation)
        defer { file.close() }
        guard existing >= length else { throw TransferError.receiveDirectory("staged data shrank") }
        let hasher = FileDigest(keepingChunkDigests: keepingChunkDigests)
        guard try hasher.add(chunksOf: file, from: 0, to: length, chunkSize: chunkSize) else {
            throw TransferError.receiveDirectory("staged data shrank")
        }
        return hasher
    }

    /// "reason: detail" for people, or the reason alone when the detail is empty or only says it again
    /// ("nobody answered in time: nobody answered in time" read as a stutter).
    static func denialText(_ reason: OfferDenyReason, _ detail: String) -> String {
        let name = "\(reason)"
        return detail.isEmpty || detail == name ? name : "\(name): \(detail)"
    }

    /// A detail string for the wire: at most `Limits.maxDetailLength` UTF-8 bytes, cut at a character.
    static func detail(_ text: String) -> String {
        Limits.clippedDetail(text)
    }

    /// "11.0 MiB": sizes in messages for people.
    static func mebibytes(_ bytes: UInt64) -> String {
        let value = Double(bytes) / 1_048_576
        let tenths = (value * 10).rounded() / 10
        return "\(tenths) MiB"
    }
}

/// An offer waiting under `OfferPolicy.ask` for `respond(to:from:accept:)`: registered before the `offerReceived`
/// event is emitted and removed by the first of the answer, the timeout, the offer's end.
struct PendingAsk {
    var deadline: ContinuousClock.Instant
    /// Sleeps until the deadline, then denies the offer; cancelled by the answer.
    var timer: Task<Void, Never>
}

extension TransferEngine {
    /// The transfer stopped here, its outcome waiting for its queued writes (`cancelIncoming`), that holds the
    /// staged file `stagedKey`; nil when none does.
    func endingHolder(of stagedKey: String) -> IncomingKey? {
        incoming.keys.first { key in
            guard let transfer = incoming[key], transfer.endsAs != nil else { return false }
            return transfer.files.contains { $0.key == stagedKey && $0.reservation != nil }
        }
    }

    /// Offers that waited for `ended` to release their staged files (`acceptOffer`): accepted now.
    func acceptParkedOffers(after ended: IncomingKey) {
        guard let parked = incoming.parkedOffers.removeValue(forKey: ended) else { return }
        Task {
            for key in parked { await self.acceptOffer(key) }
        }
    }
}
