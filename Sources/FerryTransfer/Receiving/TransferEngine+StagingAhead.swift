import FerrySystem
import Foundation

/// Creating the staged files of the next files ahead of their first chunk, off the engine actor.
///
/// Why: with many small files the creation of each staged file (a new inode, and its `flock`) was the largest single
/// cost of the receiver: on the development machine's ext4 without a journal, allocating an inode scans past every
/// recently deleted one, up to 44% of the receiver's CPU for 1000 files of 4-64 KiB, all of it on the engine actor,
/// between one chunk's hash and the next. Now, when a file's staged file is first opened, the cross-process lock of the
/// next `stagedAhead` files is taken on the `accepting` queue (`StagedReservation.lockAcrossProcesses`, which creates
/// the file, empty, and locks it through a read-only descriptor), by `stagingLanes` threads at once. Each file is
/// created without a name, locked, and then linked (`DirectoryHandle.createLockedLinkedFile`: creating by name holds
/// the staging folder's lock while the inode is allocated, so only one creation ran at a time), and the descriptor it
/// was created with, open for writing, is kept in the reservation: the actor takes it instead of opening the file a
/// second time (`ReceiveDirectory.stagedFile(key:holding:)`). The promises stay where they were: the lock is the
/// reservation's own (its mutex orders the threads), the file written is the locked one (same device and inode,
/// checked), a resumed file's truncation and every write stay on the actor and the I/O queue in order, and the writable
/// descriptor is closed before the publishing rename as before (or, for a file that never came, when its reservation is
/// released: a staged file, never a published name).
extension TransferEngine {
    /// How many files ahead of the one being received have their staged file created.
    static let stagedAhead = 32

    /// Threads that create the staged files ahead at once.
    static let stagingLanes = 2

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
        // again, and reported, when the file's first chunk opens it. Two threads take turns through the files, in
        // order: created without a name, two staged files' inodes are allocated at once (see
        // `DirectoryHandle.createLockedLinkedFile`).
        accepting.submit {
            let lanes = min(Self.stagingLanes, reservations.count)
            DispatchQueue.concurrentPerform(iterations: lanes) { lane in
                for index in stride(from: lane, to: reservations.count, by: lanes) {
                    _ = try? reservations[index].lockAcrossProcesses(creating: true)
                }
            }
        }
    }

    /// The transfer ends: each file's staged descriptor is closed and its reservation released; files that received
    /// nothing lose their staged files, created ahead and still empty (only files this transfer holds the lock of; a
    /// file with a resumed prefix or any byte written stays). The removal is part of the release
    /// (`StagedReservation.release(removingEmpty:)`), so a creation ahead still under way cannot leave one behind.
    func releaseStaged(of transfer: IncomingTransfer) {
        for entry in transfer.files {
            entry.staged?.close()
            // A foreign peer's file is never resumed: what it staged goes with its transfer.
            let removed = !transfer.keepsStaged && entry.accepted && !entry.ended
            if removed { receiveDirectory?.removeStaged(key: entry.key) }
            let unused = entry.accepted && !entry.ended && entry.resumeOffset == 0 && entry.stored == 0
            entry.reservation?.release(removingEmpty: unused || removed)
        }
    }
}
