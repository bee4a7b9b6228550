import FerrySession
import FerrySystem
import FerryWire

/// The member's answers, frame by frame.
extension HostileSwarmMember {
    func received(_ message: TransferMessage, from peer: PeerID, member: Int?) async {
        switch message {
        case .offer(let offer):
            await offerReceived(offer, from: peer)
        case .chunk(let chunk) where peer == sender && chunk.transferID == offer?.transferID:
            await senderChunk(chunk)
        case .chunk(let chunk) where swarmID.map({ chunk.transferID == $0.transferID }) ?? false:
            await relayedChunk(chunk, from: peer, member: member)
        case .chunkDigests(let batch) where peer == sender && batch.transferID == offer?.transferID:
            await digestsReceived(batch)
        case .swarmMembers(let list) where peer == sender && list.transferID == offer?.transferID:
            latestList = list.members
        case .fileEnd(let end) where peer == sender && end.transferID == offer?.transferID:
            ended.insert(end.fileIndex)
            await finishIfDone()
        case .swarmRequest(let request) where peer != sender:
            guard let swarmID, request.swarmID == swarmID else {
                let refuse = SwarmRefuse(
                    swarmID: request.swarmID, fileIndex: request.fileIndex, chunkIndex: request.chunkIndex,
                    reason: .notMember)
                await send(.swarmRefuse(refuse), to: peer)
                return
            }
            await serve(
                ChunkKey(file: request.fileIndex, chunk: UInt64(request.chunkIndex)), to: peer, member: member,
                swarmID: swarmID)
        default:
            break
        }
    }

    func offerReceived(_ offer: Offer, from peer: PeerID) async {
        guard self.offer == nil else {
            let reply = OfferReply.denying(offer.transferID, reason: .busy, detail: "one broadcast at a time")
            await send(.offerReply(reply), to: peer)
            return
        }
        self.offer = offer
        sender = peer
        let relay = behaviour.relay && offer.swarm?.index(of: deviceID) != nil
        if relay, let swarm = offer.swarm {
            let others = Set(swarm.members.map(\.deviceID)).subtracting([deviceID])
            vouch = await session.vouch(for: others, reason: "hostile member of swarm \(swarm.swarmID)")
        }
        record(.offer(offer, from: peer))
        let reply = OfferReply.accepting(
            offer.transferID, codecs: [], files: offer.files.map { _ in .accept() }, relay: relay)
        await send(.offerReply(reply), to: peer)
        guard relay, let swarm = offer.swarm else { return }
        for info in await session.peers(withState: .connected) {
            await greet(info.peerID, deviceID: info.deviceID)
        }
        // Dial every other member (their dials to us, if any, are resolved as duplicates, PROTOCOL.md 10.4).
        for member in swarm.members where member.deviceID != deviceID {
            guard let address = try? FerrySystem.SocketAddress.resolve(member.address) else { continue }
            let session = self.session
            Task { _ = try? await session.connect(toMember: member.deviceID, at: address, timeout: .seconds(20)) }
        }
    }

    func senderChunk(_ chunk: Chunk) async {
        guard let offer, let sender else { return }
        let key = ChunkKey(file: chunk.fileIndex, chunk: chunk.offset / UInt64(offer.chunkSize))
        if outstandingWithSender.remove(key) != nil { answersFromSender += 1 }
        let fresh = held[key] == nil
        held[key] = Array(chunk.data)
        let ack = ChunkAck(
            transferID: offer.transferID, fileIndex: chunk.fileIndex, offset: chunk.offset, status: .stored)
        await send(.chunkAck(ack), to: sender)
        if fresh { await announceNew(key) }
        await pushUnrequested()
        await askSender()
        await finishIfDone()
    }

    func relayedChunk(_ chunk: Chunk, from peer: PeerID, member: Int?) async {
        guard let offer, let sender else { return }
        let key = ChunkKey(file: chunk.fileIndex, chunk: chunk.offset / UInt64(offer.chunkSize))
        let data = Array(chunk.data)
        let matches =
            chunk.codec == .none && data.count == rawLength(of: key)
            && digests[key].map { $0 == FileDigest.chunkDigest(data) } ?? false
        record(.relayedChunk(fileIndex: key.file, chunkIndex: key.chunk, from: peer, member: member, matches: matches))
        guard matches, behaviour.relay, held[key] == nil else { return }
        held[key] = data
        let ack = ChunkAck(
            transferID: offer.transferID, fileIndex: chunk.fileIndex, offset: chunk.offset, status: .storedFromPeer)
        await send(.chunkAck(ack), to: sender)
        await announceNew(key)
        await finishIfDone()
    }

    func digestsReceived(_ batch: ChunkDigests) async {
        guard let swarm = offer?.swarm else { return }
        let me = swarm.index(of: deviceID).map(UInt16.init)
        var new: [ChunkKey] = []
        for (offset, entry) in batch.entries.enumerated() {
            let key = ChunkKey(file: batch.fileIndex, chunk: UInt64(batch.firstChunk) + UInt64(offset))
            if digests[key] == nil { new.append(key) }
            digests[key] = entry.sha256
            seeds[key] = entry.seed
            if entry.seed != me, held[key] == nil, !askedOfSender.contains(key) { wanted.append(key) }
        }
        if behaviour.announceUnheld, behaviour.relay, !new.isEmpty {
            await announce(
                file: batch.fileIndex, chunks: new.map(\.chunk), to: await memberPeers(), swarmID: swarm.swarmID)
        }
        await askSender()
    }

    /// Asks the sender for chunks it does not seed to us, K at a time (all at once with `requestsEverything`), each
    /// once: an honest member would ask members first; this one wants its own transfer to end whatever the others do.
    func askSender() async {
        guard behaviour.relay, let swarmID, let sender else { return }
        let most = behaviour.requestsEverything ? Int.max : Limits.maxSwarmRequestsInFlight
        while outstandingWithSender.count < most, !wanted.isEmpty {
            let key = wanted.removeFirst()
            guard held[key] == nil, !askedOfSender.contains(key) else { continue }
            askedOfSender.insert(key)
            outstandingWithSender.insert(key)
            let request = SwarmRequest(swarmID: swarmID, fileIndex: key.file, chunkIndex: UInt32(key.chunk), codecs: [])
            await send(.swarmRequest(request), to: sender)
        }
    }

    func announceNew(_ key: ChunkKey) async {
        guard behaviour.relay, !behaviour.announceUnheld, let swarmID else { return }
        await announce(file: key.file, chunks: [key.chunk], to: await memberPeers(), swarmID: swarmID)
    }

    /// Raw bytes of chunk `key` (0 past the file's end).
    func rawLength(of key: ChunkKey) -> Int {
        guard let offer, Int(key.file) < offer.files.count else { return 0 }
        let size = offer.files[Int(key.file)].size
        let offset = key.chunk * UInt64(offer.chunkSize)
        guard offset < size else { return 0 }
        return Int(min(UInt64(offer.chunkSize), size - offset))
    }

    /// Answers a request (or pushes a chunk) as the behaviour says: a chunk frame whose transferID is the swarm ID.
    func serve(_ key: ChunkKey, to peer: PeerID, member: Int?, swarmID: SwarmID) async {
        guard let offer else { return }
        let length = rawLength(of: key)
        var bytes: [UInt8]
        let isHeld = held[key] != nil
        if behaviour.announceUnheld, length > 0 {
            // It answers as if it held nothing it announced, also once it holds the chunk: whenever it is asked, it
            // lies (a member that asked before or after the sender's chunk reached it is lied to alike).
            var generator = SystemRandomNumberGenerator()
            bytes = (0..<length).map { _ in UInt8.random(in: 0...255, using: &generator) }
        } else if let chunk = held[key] {
            bytes = chunk
        } else {
            let refuse = SwarmRefuse(
                swarmID: swarmID, fileIndex: key.file, chunkIndex: UInt32(truncatingIfNeeded: key.chunk),
                reason: .notHeld)
            await send(.swarmRefuse(refuse), to: peer)
            return
        }
        let flip = behaviour.flipBytes && isHeld && !bytes.isEmpty
        if flip { bytes[bytes.count / 2] ^= 0x01 }
        let header = Chunk.frameHeader(
            transferID: swarmID.transferID, fileIndex: key.file, offset: key.chunk * UInt64(offer.chunkSize),
            rawLength: UInt32(bytes.count), codec: .none, sha256: FileDigest.chunkDigest(bytes),
            dataLength: bytes.count)
        do {
            try await session.sendTransferFrame([header, bytes], to: peer)
            record(
                .served(
                    fileIndex: key.file, chunkIndex: key.chunk, to: peer, member: member, flipped: flip,
                    held: isHeld && !behaviour.announceUnheld))
        } catch {}
    }

    /// Sends `published` for every file whose `fileEnd` came and whose chunks it holds (nothing is written anywhere).
    func finishIfDone() async {
        guard let offer, let sender, !behaviour.holdsResults else { return }
        for file in ended.subtracting(resulted).sorted() {
            let size = offer.files[Int(file)].size
            let chunks = (size + UInt64(offer.chunkSize) - 1) / UInt64(offer.chunkSize)
            guard (0..<chunks).allSatisfy({ held[ChunkKey(file: file, chunk: $0)] != nil }) else { continue }
            resulted.insert(file)
            let result = FileResult(
                transferID: offer.transferID, fileIndex: file, status: .published, detail: offer.files[Int(file)].path)
            await send(.fileResult(result), to: sender)
        }
        if resulted.count == offer.files.count,
            !observations.contains(where: { if case .finished = $0 { true } else { false } })
        {
            record(.finished)
        }
    }
}
