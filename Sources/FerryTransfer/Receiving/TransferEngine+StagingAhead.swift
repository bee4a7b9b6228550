import FerrySystem

/// Creating the staged files of the next files ahead of their first chunk, off the engine actor.
///
/// Why: with many small files the creation of each staged file (a new inode, and its `flock`) was the largest
/// single cost of the receiver: on the development machine's ext4 without a journal, allocating an inode scans past
/// every recently deleted one, up to 44% of the receiver's CPU for 1000 files of 4-64 KiB, all of it on the engine
/// actor, between one chunk's hash and the next. Now, when a file's staged file is first opened, the cross-process
/// lock of the next `stagedAhead` files is taken on the `accepting` queue (`StagedReservation.lockAcrossProcesses`,
/// which creates the file, empty, and locks it through a read-only descriptor). The actor then only opens the
/// existing locked file for writing, as before (`ReceiveDirectory.stagedFile(key:holding:)`), so the promises stay
/// where they were: the lock is the reservation's own (its mutex orders the two threads), the file written is
/// the locked one, a resumed file's truncation and every write stay on the actor and the I/O queue in order, and
/// nothing is opened for writing ahead (closing a read-only descriptor never shows a watcher a written file).
extension TransferEngine {
    /// How many files ahead of the one being received have their staged file created.
    static let stagedAhead = 32

    /// `file`'s staged file was just opened: make sure the files up to `stagedAhead` after it have theirs, in batches
    /// of at least half of that.
    func stageAhead(after file: Int, _ key: IncomingKey) {
        let reservations =
            withIncoming(key) { transfer -> [StagedReservation] in
                let last = min(file + Self.stagedAhead, transfer.files.count - 1)
                let through = transfer.stagedAheadThrough
                guard last - through >= Self.stagedAhead / 2 || (last == transfer.files.count - 1 && last > through)
                else { return [] }
                let first = max(through + 1, file + 1)
                transfer.stagedAheadThrough = last
                guard first <= last else { return [] }
                return transfer.files[first...last].compactMap { entry in
                    guard entry.accepted, !entry.ended, entry.staged == nil, entry.resumeOffset == 0 else { return nil }
                    return entry.reservation
                }
            } ?? []
        guard !reservations.isEmpty else { return }
        // A lock that fails here (another receiver holds the file, the transfer ended and released it) is found
        // again, and reported, when the file's first chunk opens it.
        accepting.submit {
            for reservation in reservations { _ = try? reservation.lockAcrossProcesses() }
        }
    }

    /// The transfer ends with files that received nothing: their staged files, created ahead and still empty, go
    /// (only files this transfer holds the lock of; a file with a resumed prefix or any byte written stays).
    func removeStagedAhead(of transfer: IncomingTransfer) {
        guard let directory = receiveDirectory else { return }
        for entry in transfer.files
        where entry.accepted && !entry.ended && entry.resumeOffset == 0 && entry.stored == 0 {
            guard let reservation = entry.reservation else { continue }
            directory.removeEmptyStaged(holding: reservation)
        }
    }
}
