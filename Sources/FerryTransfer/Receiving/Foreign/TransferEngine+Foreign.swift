import FerrySession
import FerryStateMachines
import FerrySystem
import FerryWire

/// Peers of other protocols on the receive path (docs/ARCHITECTURE.md, "How another protocol uses the receive
/// path"): their adapters drive the steps a ferry link's frames drive, and get the answers as values.
extension TransferEngine {
    /// Attaches a peer that has no ferry link: it gets a peer ID from the foreign range and the identity its adapter
    /// vouches for. Its offers then go through the same receive path as a ferry sender's. After `stop`, the handle's
    /// `answers` has ended and its offers get no answer.
    public func attachForeignPeer(_ identity: ForeignPeerIdentity) -> ForeignPeer {
        var id: PeerID
        repeat {
            id = PeerID(rawValue: .random(in: PeerID.firstForeign...UInt64.max))
        } while incoming.foreignPeers[id] != nil
        let info = PeerInfo(
            peerID: id, deviceID: identity.deviceID, displayName: identity.displayName, mode: .peer, address: nil,
            isDiscovered: false, isAcceptingConnections: false, state: .connected, isTrusted: identity.isTrusted,
            takesMessages: false, protocolName: identity.protocolName)
        let (answers, continuation) = AsyncStream.makeStream(of: TransferMessage.self)
        if isStopped {
            continuation.finish()
        } else {
            incoming.foreignPeers[id] = ForeignPeerRecord(info: info, answers: continuation)
        }
        return ForeignPeer(peerID: id, info: info, answers: answers, engine: self)
    }

    /// Who `peerID` is: an attached foreign peer's identity, or the session's peer.
    func peerInfo(_ peerID: PeerID) async -> PeerInfo? {
        if peerID.isForeign { return incoming.foreignPeers[peerID]?.info }
        return await session.peer(peerID)
    }

    /// Whether foreign peer `peerID` is attached and not being detached: only then are its offers and pieces taken.
    func isAttached(_ peerID: PeerID) -> Bool {
        guard let record = incoming.foreignPeers[peerID] else { return false }
        return !record.isDetaching
    }

    /// Hands an answer of the receive path to a foreign peer's adapter; false when it is not attached. Chunk
    /// acknowledgements are not handed on: an adapter's flow control is `write` returning, and one per chunk would
    /// pile up in `answers` with the bytes taken (review of issue 29), so `answers` holds at most a `fileResult`
    /// per offered file and a `cancel` per transfer.
    func answerForeign(_ message: TransferMessage, to peerID: PeerID) -> Bool {
        guard let record = incoming.foreignPeers[peerID] else { return false }
        if case .chunkAck = message { return true }
        if case .offerReply(let reply) = message,
            let waiter = incoming.offerWaiters.removeValue(
                forKey: IncomingKey(peer: peerID, transferID: reply.transferID))
        {
            waiter.resume(returning: reply)
            return true
        }
        record.answers.yield(message)
        return true
    }

    /// A foreign peer's offer: a ferry `Offer` of `files` at this engine's chunk size (no codec, no digests section),
    /// through `offerReceived`. Returns the answer; nil when the offer went away unanswered (withdrawn, detached).
    /// Cancelling the calling task withdraws the offer (`withdrawForeignOffer`) unless it was answered already.
    func foreignOffer(_ files: [ForeignFile], from peerID: PeerID) async -> (TransferID, OfferReply?) {
        let transferID = TransferID.random()
        let offer = Offer(
            transferID: transferID, chunkSize: UInt32(configuration.chunkSize), codecs: [],
            files: files.map {
                OfferedFile(
                    path: $0.path, size: $0.size, modificationTime: $0.modificationTime, mediaType: $0.mediaType)
            })
        guard isAttached(peerID), !Task.isCancelled else { return (transferID, nil) }
        let key = IncomingKey(peer: peerID, transferID: transferID)
        let reply = await withTaskCancellationHandler {
            await withCheckedContinuation { (continuation: CheckedContinuation<OfferReply?, Never>) in
                incoming.offerWaiters[key] = continuation
                Task {
                    // Withdrawn or detached before this ran: nothing is offered.
                    guard self.incoming.offerWaiters[key] != nil, self.isAttached(peerID) else { return }
                    // The limits a ferry offer is decoded with (file count, path and media type lengths), and
                    // digests of SHA-256's length.
                    do throws(WireError) {
                        try offer.validate()
                    } catch {
                        await self.deny(offer, to: peerID, .invalidOffer, "\(error)")
                        return
                    }
                    if let bad = files.firstIndex(where: { $0.sha256 != nil && $0.sha256?.count != FileDigest.length })
                    {
                        await self.deny(offer, to: peerID, .invalidOffer, "file \(bad + 1): a SHA-256 is 32 bytes")
                        return
                    }
                    await self.offerReceived(offer, from: peerID, foreignDigests: files.map(\.sha256))
                }
            }
        } onCancel: {
            Task { await self.withdrawForeignOffer(key) }
        }
        return (transferID, reply)
    }

    /// The caller of a foreign offer gave up (its task was cancelled) before the offer was answered: the offer
    /// answers nil, and its transfer ends as a ferry offer withdrawn by its sender does (an ask under way is
    /// withdrawn: the application is told with `denied`; nothing was staged). Once answered, nothing changes here:
    /// the adapter cancels the transfer itself.
    func withdrawForeignOffer(_ key: IncomingKey) async {
        guard let waiter = incoming.offerWaiters.removeValue(forKey: key) else { return }
        waiter.resume(returning: nil)
        if incoming[key] != nil {
            await cancelIncoming(key, reason: nil, detail: "withdrawn by its sender", tellPeer: false)
        }
    }

    /// Takes the next piece of a foreign peer's file: cut into chunks at the offer's chunk size (a piece covering a
    /// whole chunk is passed as a slice; only what is left over is copied into the file's partial chunk), each
    /// through `chunkReceived` once the peer's queued bytes leave room for it.
    func foreignPiece(_ piece: ArraySlice<UInt8>, file: Int, of transferID: TransferID, from peerID: PeerID)
        async throws(ForeignPieceError)
    {
        let key = IncomingKey(peer: peerID, transferID: transferID)
        try beginPiece(file, key)
        defer { withIncoming(key) { $0.files[file].isTakingPiece = false } }
        guard let transfer = incoming[key], let machine = transfer.machine else { throw .ended }
        let chunkSize = UInt64(transfer.offer.chunkSize)
        let size = transfer.files[file].size
        let left = size - machine.expectedOffset(of: file) - UInt64(transfer.files[file].partialChunk.count)
        guard UInt64(piece.count) <= left else { throw .tooLong }
        var rest = piece
        while !rest.isEmpty {
            guard let offset = incoming[key]?.machine?.expectedOffset(of: file),
                let held = incoming[key]?.files[file].partialChunk.count
            else { throw .ended }
            let length = Int(min(chunkSize, size - offset))
            let raw: ArraySlice<UInt8>
            if held == 0, rest.count >= length {
                raw = rest.prefix(length)
                rest = rest.dropFirst(length)
            } else {
                let take = min(length - held, rest.count)
                // Bytes held for the next chunk count under `maxQueuedBytes` as queued ones do (review of issue 29:
                // a chunk less a byte to each of many files was held uncounted).
                try await waitForRoom(take, peerID)
                guard let now = incoming[key], now.phase == .receiving, !now.isEnding, !now.files[file].ended else {
                    throw .ended
                }
                _ = incoming.admit(take, from: peerID)
                withIncoming(key) { transfer in
                    // One allocation per chunk, not a doubling per piece.
                    if held == 0 { transfer.files[file].partialChunk.reserveCapacity(length) }
                    transfer.files[file].partialChunk += rest.prefix(take)
                }
                rest = rest.dropFirst(take)
                guard held + take == length else { break }
                raw =
                    withIncoming(key) { transfer -> ArraySlice<UInt8> in
                        defer { transfer.files[file].partialChunk = [] }
                        return transfer.files[file].partialChunk[...]
                    } ?? []
                // Held no more: the whole chunk is counted again as it is queued (`chunkReceived`).
                incoming.written(raw.count, by: peerID)
            }
            try await waitForRoom(raw.count, peerID)
            guard let now = incoming[key], now.phase == .receiving, !now.isEnding, !now.files[file].ended else {
                throw .ended
            }
            // No digest: the file's streaming SHA-256 takes the raw bytes (`chunkReceived`).
            await chunkReceived(
                Chunk(
                    transferID: transferID, fileIndex: UInt32(file), offset: offset, rawLength: UInt32(raw.count),
                    codec: .none, sha256: [], data: raw),
                from: peerID)
        }
        guard let now = incoming[key], !now.isEnding, !now.files[file].ended else { throw .ended }
    }

    /// Checks that `file` of `key` is an accepted file still taking bytes, and marks a piece of it under way.
    private func beginPiece(_ file: Int, _ key: IncomingKey) throws(ForeignPieceError) {
        guard let transfer = incoming[key], transfer.phase == .receiving, transfer.files.indices.contains(file),
            transfer.files[file].accepted
        else {
            throw .notAccepted
        }
        guard !transfer.isEnding, !transfer.files[file].ended, !transfer.files[file].endTaken else { throw .ended }
        guard !transfer.files[file].isTakingPiece else { throw .overlapping }
        incoming[key]?.files[file].isTakingPiece = true
    }

    /// Waits until `count` more bytes of `peerID` stay within `IncomingTransfers.maxQueuedBytes` (woken as writes
    /// complete, `IncomingTransfers.written`); throws when the peer is detached meanwhile.
    private func waitForRoom(_ count: Int, _ peerID: PeerID) async throws(ForeignPieceError) {
        while !incoming.admits(count, from: peerID) {
            guard isAttached(peerID) else { throw .ended }
            probe.foreignRoomWaits += 1
            await withCheckedContinuation { incoming.roomWaiters[peerID, default: []].append($0) }
        }
        guard isAttached(peerID) else { throw .ended }
    }

    /// Every byte of a foreign peer's file came: its end goes through `fileEndReceived` with the sender's SHA-256
    /// (none: checked by size). A file short of bytes fails, its staged data removed.
    func foreignFileEnd(_ file: Int, of transferID: TransferID, from peerID: PeerID) async throws(ForeignPieceError) {
        let key = IncomingKey(peer: peerID, transferID: transferID)
        guard let transfer = incoming[key], transfer.phase == .receiving, transfer.files.indices.contains(file),
            transfer.files[file].accepted, let machine = transfer.machine
        else { throw .notAccepted }
        let entry = transfer.files[file]
        // A second end of a file (its first being verified or published) is the adapter's to refuse, not a broken
        // rule that detaches the peer.
        guard !transfer.isEnding, !entry.ended, !entry.endTaken else { throw .ended }
        guard !entry.isTakingPiece else { throw .overlapping }
        incoming[key]?.files[file].endTaken = true
        let got = machine.expectedOffset(of: file) + UInt64(entry.partialChunk.count)
        guard got == entry.size else {
            await fileFailed(
                file, status: .cancelled, detail: "its sender ended it after \(got) of \(entry.size) bytes", key,
                removeStaged: true)
            throw .incomplete
        }
        await fileEndReceived(
            FileEnd(transferID: transferID, fileIndex: UInt32(file), digest: entry.givenSHA256), from: peerID)
    }

    /// The adapter cannot give file `file` whole (its upload broke mid-body): it fails alone, with `detail`, its
    /// staged data removed; the transfer's other files go on. Nothing when the file ended already.
    func foreignFileFailed(_ file: Int, of transferID: TransferID, from peerID: PeerID, detail: String) async {
        let key = IncomingKey(peer: peerID, transferID: transferID)
        guard let transfer = incoming[key], transfer.phase == .receiving, transfer.files.indices.contains(file),
            transfer.files[file].accepted, !transfer.isEnding, !transfer.files[file].ended,
            !transfer.files[file].endTaken, !transfer.files[file].isTakingPiece
        else { return }
        incoming[key]?.files[file].endTaken = true
        await fileFailed(file, status: .cancelled, detail: detail, key, removeStaged: true)
    }

    /// A foreign peer is gone: its transfers end as over a lost link, then it is forgotten and `answers` ends.
    ///
    /// It is marked detaching before the first await: from then on its offers are not taken (`isAttached`), an
    /// offer being accepted stops at its next check (`acceptOffer`'s `isStillThisOffer`), and writes waiting for
    /// room give up; so no transfer of it outlives the detach (review of issue 29: an offer taken while the detach
    /// awaited a cancel was left without its peer).
    func detachForeignPeer(_ peerID: PeerID, reason: String) async {
        await waitAtDetachGate(beforeMarking: true)
        guard isAttached(peerID) else { return }
        incoming.foreignPeers[peerID]?.isDetaching = true
        for waiter in incoming.roomWaiters.removeValue(forKey: peerID) ?? [] { waiter.resume() }
        await waitAtDetachGate(beforeMarking: false)
        while let key = incoming.keys.first(where: { $0.peer == peerID && incoming[$0]?.isEnding == false }) {
            await cancelIncoming(key, reason: nil, detail: "the peer went away (\(reason))", tellPeer: false)
        }
        endForeignPeer(peerID)
    }

    /// Forgets a foreign peer: offers waiting for an answer get none, writes waiting for room give up, `answers` ends.
    func endForeignPeer(_ peerID: PeerID) {
        guard let record = incoming.foreignPeers.removeValue(forKey: peerID) else { return }
        for key in incoming.offerWaiters.keys where key.peer == peerID {
            incoming.offerWaiters.removeValue(forKey: key)?.resume(returning: nil)
        }
        for waiter in incoming.roomWaiters.removeValue(forKey: peerID) ?? [] { waiter.resume() }
        record.answers.finish()
    }

    /// The staged name of a foreign peer's file: 64 hex digits like a `ResumeKey`, but of a random value under
    /// another label, so that it never meets a ferry sender's resume key and no later upload finds it (no resume).
    static func foreignStagedKey() -> String {
        var generator = SystemRandomNumberGenerator()
        var bytes: [UInt8] = Array("ferry-foreign-1".utf8)
        for _ in 0..<4 { bytes += withUnsafeBytes(of: generator.next() as UInt64, Array.init) }
        return Hex.string(SHA256Hasher.digest(bytes))
    }
}
