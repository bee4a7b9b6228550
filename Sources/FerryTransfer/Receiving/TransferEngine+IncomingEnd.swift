import FerrySession
import FerryStateMachines
import FerrySystem
import FerryWire

/// How a transfer this side receives ends: finished when every accepted file ended, cancelled (either side, a
/// lost link, the engine stopping), and the outcome reported once its queued writes completed.
extension TransferEngine {
    func finishIfDone(_ key: IncomingKey) async {
        guard let transfer = incoming[key], transfer.machine?.isFinished == true, transfer.pending.isEmpty else {
            return
        }
        finishIncoming(key, failure: nil)
    }

    func finishIncoming(_ key: IncomingKey, failure: String?, stop: TransferStop? = nil) {
        guard let transfer = incoming.end(key) else { return }
        transfer.endingTimer?.cancel()
        defer {
            if !incoming.endingWaiters.isEmpty, !incoming.hasEnding {
                for waiter in incoming.endingWaiters { waiter.resume() }
                incoming.endingWaiters = []
            }
        }
        // A member that published every file stays in its swarm to serve the others; any other end leaves it.
        let complete =
            failure == nil && transfer.filesFailed == 0 && transfer.files.allSatisfy { !$0.accepted || $0.ended }
        let swarm =
            transfer.swarmID.map { complete ? lingerInSwarm($0) : leaveSwarm($0) } ?? (relayed: 0, served: 0)
        releaseStaged(of: transfer)
        acceptParkedOffers(after: key)
        for waiter in transfer.publishWaiters { waiter.resume() }
        let failedNow = transfer.files.filter { $0.accepted && !$0.ended }.count
        var outcome = TransferOutcome(
            transferID: key.transferID, peer: transfer.peer, direction: .receiving,
            filesSucceeded: transfer.filesSucceeded, filesFailed: transfer.filesFailed + failedNow,
            filesSkipped: transfer.files.filter { !$0.accepted }.count, bytes: transfer.bytesDone,
            wireBytes: transfer.wireBytes, chunkBytes: transfer.bytesDone, resumedBytes: transfer.resumedBytes,
            duration: clock.now - transfer.started,
            failure: failure, relayedBytes: swarm.relayed, servedBytes: swarm.served)
        outcome.acceptedBytes = transfer.totalBytes
        outcome.alreadyThereBytes = transfer.files.reduce(0) { $0 + ($1.alreadyThere == nil ? 0 : $1.size) }
        outcome.stop = stop
        outcome.emptyFolders = transfer.foldersMade
        outcome.emptyFoldersFailed = transfer.foldersFailed
        // What stays staged of the files that did not end, for a resume (`releaseStaged` keeps it).
        outcome.keptBytes =
            stop == nil || !transfer.keepsStaged
            ? 0
            : transfer.files.reduce(0) { kept, file in
                let staged = file.accepted && !file.ended && !file.inMemory && file.alreadyThere == nil
                return kept + (staged ? file.resumedBytes + file.written.value : 0)
            }
        log(1, "transfer \(key.transferID) from \(transfer.peer.displayName) finished: \(failure ?? "ok")")
        emit(.finished(outcome))
    }

    /// Ends an incoming transfer early. Verified files are still published; staged data stays for a resume.
    /// `stop` says how it stopped, for the outcome: by default cancelled here with `reason`, or the link lost
    /// without one. With `drain`, its outcome comes once the writes already queued for it complete (a marker queued
    /// behind them on `io`), so that `keptBytes` says what is in its staged files, or at `maxEndingWait` with what
    /// was written by then. This never waits for `io` itself: the caller is the engine's one event loop, and a
    /// stalled disk must not hold every other peer's frames. Without `drain` (a peer that broke the protocol, whose
    /// link is cut at once) the outcome comes now, with what was written so far.
    func cancelIncoming(
        _ key: IncomingKey, reason: CancelReason?, detail: String, tellPeer: Bool, stop: TransferStop? = nil,
        drain: Bool = true
    ) async {
        guard let transfer = incoming[key], !transfer.isEnding else { return }
        // From here on no acknowledgement goes out and arriving chunks are dropped, through the awaits below.
        incoming[key]?.isEnding = true
        transfer.hashStop?.set()  // held files being hashed for it (rule 10): stopped at the next chunk
        if transfer.phase == .asking {
            incoming.asks.removeValue(forKey: key)?.timer.cancel()
            _ = incoming.end(key)
            incoming.offerWaiters.removeValue(forKey: key)?.resume(returning: nil)  // a foreign peer's, unanswered  // remembered: the same ID offered again is a violation (`offerReceived`)
            // The application may be showing the offer: tell it that it is gone.
            let why = detail.isEmpty ? reason.map { "\($0)" } ?? "withdrawn" : detail
            emit(.denied(transferID: key.transferID, peer: transfer.peer, direction: .receiving, reason: why))
            if tellPeer, let reason {
                await send(
                    .cancel(TransferCancel(transferID: key.transferID, reason: reason, detail: "")), to: key.peer)
            }
            return
        }
        // Verified files are complete: they are published even now (their results go before the cancel), and a
        // batch being published is waited for, so that no file appears without its result.
        await publishPending(key)
        guard incoming[key] != nil else { return }  // its last files were published meanwhile: it is over
        if tellPeer, let reason {
            let cancel = TransferCancel(transferID: key.transferID, reason: reason, detail: Self.detail(detail))
            await send(.cancel(cancel), to: key.peer)
        }
        let text = detail.isEmpty ? reason.map { "\($0)" } ?? "cancelled" : detail
        let how = stop ?? reason.map(TransferStop.cancelledHere) ?? .linkLost
        guard drain else {
            finishIncoming(key, failure: text, stop: how)
            return
        }
        // The outcome waits for the writes queued before the end (chunks that come now are dropped): what it says is
        // kept is then in the staged files, and none is written after they are closed.
        incoming[key]?.endsAs = (text, how)
        let completions = self.completions
        io.submit {
            completions.yield(WriteCompletion(key: key, file: 0, bytes: 0, actions: [], endsTransfer: true))
        }
        incoming[key]?.endingTimer = Task { [clock, weak self] in
            try? await Task.sleep(for: IncomingTransfers.maxEndingWait, clock: clock)
            guard !Task.isCancelled else { return }
            await self?.endStopped(key)
        }
    }

    /// The outcome of a transfer stopped here (`cancelIncoming`), once the writes queued before its stop completed
    /// or the wait for them reached its bound.
    func endStopped(_ key: IncomingKey) {
        guard let end = incoming[key]?.endsAs else { return }
        finishIncoming(key, failure: end.failure, stop: end.stop)
    }
}
