import FerrySession
import FerryStateMachines
import FerrySystem
import FerryWire

/// What a receiver answers a sender: its reply to the offer, its acknowledgement of each chunk, its result for each
/// file (PROTOCOL.md 11.10). Each moves the peer's `OutgoingTransferMachine` and wakes its pump.
extension TransferEngine {
    func replyReceived(_ reply: OfferReply, from peerID: PeerID) async {
        let id = reply.transferID
        // A reply that crossed this side's cancel, after the send with that peer ended here, is not an error.
        let crossed = operations.hasEnded(id, peerID)
        guard let files = operations[id]?.offer.files else {
            if crossed { return }
            await violation(by: peerID, "a reply to an offer that was not made")
            return
        }
        let outcome: Result<TransferEvent, TransferProtocolError>?? = withPeer(id, peerID) { peer in
            // A reply that crossed this side's cancel is not an error: the transfer is over here.
            if peer.failure != nil { return nil }
            do throws(TransferProtocolError) {
                guard try peer.machine.replyReceived(reply) else {
                    let reason = Self.denialText(reply.reason, reply.detail)
                    peer.deniedReason = reason
                    return .success(.denied(transferID: id, peer: peer.info, direction: .sending, reason: reason))
                }
            } catch {
                return .failure(error)
            }
            peer.codecs = reply.codecs.intersection(Self.localCodecs)
            peer.started = clock.now  // the time a person took to accept is not transfer time
            for (index, decision) in reply.files.enumerated() where decision.accepted {
                peer.fileBytesDone[index] = decision.resumeOffset
                peer.resumeOffsets[index] = decision.resumeOffset
                peer.resumedBytes += decision.resumeOffset
                peer.acceptedBytes += files[index].size
                peer.acceptedFiles += 1
            }
            return .success(
                .started(
                    transferID: id, peer: peer.info, direction: .sending, files: files,
                    accepted: reply.files.map(\.accepted), resumeOffsets: reply.files.map(\.resumeOffset)))
        }
        switch outcome {
        case .success(let event)??: emit(event)
        case .failure(let error)??:
            await violation(by: peerID, error.description)
            return
        case .some(.none): return
        case .none:
            if crossed { return }
            await violation(by: peerID, "a reply to an offer that was not made to it")
            return
        }
        await swarmReplyReceived(reply, id, peerID)
        wake(id, peerID)
    }

    func ackReceived(_ ack: ChunkAck, from peerID: PeerID) async {
        if await swarmAckReceived(ack, from: peerID) { return }
        let id = ack.transferID
        // Acks still in flight when the transfer with this peer ended here (cancelled, failed) are harmless.
        let outcome = withPeer(id, peerID) {
            peer -> Result<OutgoingTransferMachine.AckOutcome, TransferProtocolError> in
            do throws(TransferProtocolError) {
                let outcome = try peer.machine.ackReceived(ack)
                if case .stored(let file, let bytes) = outcome {
                    peer.bytesDone += UInt64(bytes)
                    peer.fileBytesDone[file] += UInt64(bytes)
                }
                return .success(outcome)
            } catch {
                return .failure(error)
            }
        }
        switch outcome {
        case .success(.stored(let file, _)):
            reportProgress(id, peerID, file: file)
        case .success(.resend(let file, let offset)):
            log(1, "peer \(peerID) received a corrupt chunk (file \(file), offset \(offset)): sending it again")
            await forgetKeptDigests(file, id)
        case .failure(let error):
            await violation(by: peerID, error.description)
            return
        case .success(.late), nil:
            break
        }
        wake(id, peerID)
    }

    func resultReceived(_ result: FileResult, from peerID: PeerID) async {
        let id = result.transferID
        guard let files = operations[id]?.offer.files, operations[id]?.peers[peerID] != nil else {
            // Not a transfer this side sends to that peer: a sender giving up on a file of one it receives?
            await senderResultReceived(result, from: peerID)
            return
        }
        let file = Int(result.fileIndex)
        let published = result.status == .published
        // A file sent with digests kept from an earlier send (`DigestCache`) that did not match: they were stale.
        let staleKept = result.status == .hashMismatch ? await forgetKeptDigests(file, id) : false
        let outcome = withPeer(id, peerID) { peer -> Result<FileOutcome, TransferProtocolError>? in
            if peer.failure != nil { return nil }  // crossed this side's cancel
            do throws(TransferProtocolError) {
                try peer.machine.resultReceived(result)
            } catch {
                return .failure(error)
            }
            let digest = published ? peer.sentDigests[file] : nil
            peer.sentDigests[file] = nil
            if published { peer.filesSucceeded += 1 } else { peer.filesFailed += 1 }
            let offered = files[file]
            if published && result.identical {
                peer.filesAlreadyThere += 1
                peer.alreadyThereBytes += min(peer.resumeOffsets[file] ?? 0, offered.size)
            }
            var failure =
                peer.abandoned[file]
                ?? (result.detail.isEmpty ? "\(result.status)" : "\(result.status): \(result.detail)")
            if staleKept {
                failure +=
                    "; it was sent with the digests kept from an earlier send, which were stale (the file "
                    + "changed without a new change time) and are now forgotten: send it again"
            }
            return .success(
                FileOutcome(
                    transferID: id, peer: peer.info, direction: .sending, fileIndex: file, fileName: offered.path,
                    size: offered.size, publishedName: published ? result.detail : nil,
                    failure: published ? nil : failure,
                    resumedBytes: min(peer.resumeOffsets[file] ?? 0, offered.size)
                        - min(peer.prefixDropped[file] ?? 0, min(peer.resumeOffsets[file] ?? 0, offered.size)),
                    alreadyThere: published && result.identical, mediaType: offered.mediaType,
                    digest: digest))
        }
        switch outcome {
        case .success(let fileOutcome)??:
            emit(.fileFinished(fileOutcome))
            await swarmResultReceived(result, id, peerID)
        case .failure(let error)??:
            await violation(by: peerID, error.description)
            return
        case .some(.none), .none:
            return
        }
        wake(id, peerID)
    }

    /// A peer found a chunk of `file` corrupt, or the file not matching its digest: its digests, if they came from
    /// the `DigestCache`, may be stale, and the chunk source forgets them (the file is hashed from its bytes from now
    /// on). True when the file was sent with kept digests. A send without any asks nothing of its source (no wait).
    @discardableResult
    func forgetKeptDigests(_ file: Int, _ id: TransferID) async -> Bool {
        guard let source = operations[id]?.source, source.hasKeptDigests else { return false }
        return await source.forgetKeptDigests(file: file)
    }
}
