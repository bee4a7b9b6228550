import FerrySession
import FerryWire

/// Chunk acknowledgements of write completions taken together go to their peer in one queue entry.
extension TransferEngine {
    /// Writes done together (what the completion channel held at once), in order: their acknowledgements to each peer
    /// go in one queue entry, after the batch or before any other frame to that peer, whichever comes first.
    ///
    /// Why: small files sent together (`SmallFileFrames`) arrive together and their writes complete together; an
    /// acknowledgement sent alone per chunk was a queue entry, a write and, on the sender, a read and a wake each.
    /// The order of frames to a peer stays the machine's: every other frame the engine sends to it (`send`, the
    /// results of a publishing turn) takes the held acknowledgements along first, and a verification that waits
    /// for the disk sends them before it waits.
    func completed(_ completions: [WriteCompletion]) async {
        incoming.isHoldingAcks = true
        for completion in completions { await completed(completion) }
        incoming.isHoldingAcks = false
        for peer in incoming.peersWithHeldAcks { await sendHeldAcks(to: peer) }
    }

    /// Sends the acknowledgements held for `peerID`, if any, in one queue entry.
    func sendHeldAcks(to peerID: PeerID) async {
        let frames = incoming.takeHeldAcks(for: peerID)
        guard !frames.isEmpty else { return }
        probe.ackEntries += 1
        do {
            try await session.sendTransferFrame(frames, to: peerID)
        } catch {
            log(2, "could not send \(frames.count) chunk acknowledgements to \(peerID): \(error)")
        }
    }
}
