import FerrySession
import FerryWire

extension TransferEngine {
    /// A `fileResult` from the peer that sends a transfer this side receives: the sender gave up on a file whose
    /// source changed while it was being sent (`sourceChanged`, PROTOCOL.md 11.10 rule 9). The file ends here with
    /// that status, its staged data is removed (it may hold bytes of both versions, and the next offer of the file,
    /// with the same name, size and time, would resume from them), nothing of it is published, and the sender gets
    /// the file's `fileResult` as for any other failure. A file already ended, or verified and waiting to be
    /// published, is left as it is: what it holds matched the digest of a read that saw no change.
    func senderResultReceived(_ result: FileResult, from peerID: PeerID) async {
        let key = IncomingKey(peer: peerID, transferID: result.transferID)
        // No such transfer here (ended, or a result of a send of ours that crossed its end): nothing to do.
        guard let transfer = incoming[key], transfer.phase == .receiving, !transfer.isEnding else { return }
        let file = Int(result.fileIndex)
        guard result.status == .sourceChanged, file < transfer.files.count, transfer.files[file].accepted else {
            await violation(
                by: peerID,
                "a sender's fileResult with status \(result.status.rawValue) for file \(file) (only "
                    + "sourceChanged, for an accepted file, may come from a sender)")
            return
        }
        guard !transfer.files[file].ended, transfer.files[file].hasher != nil else { return }
        log(1, "transfer \(key.transferID): the sender's copy of file \(file) changed while it was being sent")
        await fileFailed(
            file, status: .sourceChanged, detail: "the sender's copy changed while it was being sent; nothing was kept",
            key, removeStaged: true)
    }
}
