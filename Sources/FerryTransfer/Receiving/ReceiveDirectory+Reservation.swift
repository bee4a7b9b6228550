import FerrySystem
import Glibc
import Synchronization

/// One transfer's hold on one staged file: nobody else writes, truncates, resumes from or publishes it until it is
/// released.
///
/// Why: two transfers of the same file from the same sender get the same staged name (`ResumeKey`). Writing one
/// staged file together, they truncate and overwrite each other's bytes, while each one's file digest is computed from
/// the chunks it received in memory and matches: a file mixing both, or with zeros in it, would be published as
/// verified. This happened with two offers accepted at once by one receiver, and with two `ferry receive` processes
/// on one directory. So a staged file belongs to one transfer at a time, on two levels:
/// - in this process, a claim on the key (`ReceiveDirectory.reserveStaged(key:)`), taken without a system call and
///   so before an acceptance first waits for anything; a second claim is refused (the offer is denied as busy);
/// - across processes, an exclusive `flock(2)` on the staged file itself, through a read-only descriptor of its own
///   (closing a read-only descriptor never shows a watcher a written file), taken before the staged data is first
///   read or written (`lockAcrossProcesses()`) and held until the file is published or failed. A lock held by
///   another process refuses the file as busy. `flock` locks belong to one open file, so the lock is also kept when
///   the transfer closes its other descriptors of the file.
/// The lock is taken on the file the staged name holds once locked (checked after locking, retried if the name
/// moved on meanwhile), and every later open of the staged name for this transfer checks it is that same file
/// (`ReceiveDirectory.stagedFile(key:holding:)`). Programs other than ferry that write into `.ferry-staging` are not
/// stopped by any of this (advisory locks).
public final class StagedReservation: Sendable {
    /// The staged file's key (64 hex digits).
    public let key: String
    private let directory: ReceiveDirectory
    /// Held while the lock is taken, which creates the file: on ext4 without a journal that can take milliseconds
    /// (see `TransferEngine.stagedAhead`), and the engine actor, reaching a file whose staged file the `accepting`
    /// queue is creating, waits here for it. A `SleepingLock`, not a `Mutex`: Swift's `Mutex` is a priority-
    /// inheriting futex, whose waiter spins while the holder runs, so that wait burned a second core the sender and
    /// the receiver's other queues needed (5% of a receiver's CPU in a profile of 1000 small files).
    private let state = SleepingLock(State())

    private struct State: Sendable {
        var lock: RegularFile?
        /// The locked file open for writing, when the lock created it (`lockAcrossProcesses(creating:)`), until
        /// `stagedFile(key:holding:)` takes it.
        var writable: RegularFile?
        var device: UInt64 = 0
        var inode: UInt64 = 0
        var released = false
    }

    init(key: String, directory: ReceiveDirectory) {
        self.key = key
        self.directory = directory
    }

    /// Takes the cross-process lock on the staged file, creating it (empty, mode 0600) if missing; returns false
    /// when another transfer (in another process) holds it. Once taken, later calls return true at once.
    ///
    /// With `creating` (the file is expected not to exist: staged ahead, `TransferEngine.stageAhead`), the file is
    /// created without a name and linked (`DirectoryHandle.createLockedLinkedFile`), so that several threads can create
    /// staged files at once, and the descriptor it was created with is kept for `stagedFile(key:holding:)`, which
    /// then opens nothing. An existing file is locked as without it.
    /// - Throws: `SystemError` (open, flock, fstat), ESTALE after a release.
    public func lockAcrossProcesses(creating: Bool = false) throws(SystemError) -> Bool {
        try state.withLock { state throws(SystemError) -> Bool in
            guard !state.released else {
                throw SystemError(call: "lock staged file \(key) (already released)", errno: Errno(rawValue: ESTALE))
            }
            if state.lock != nil { return true }
            guard let locked = try directory.lockStaged(key: key, creating: creating) else { return false }
            state.lock = locked.lock
            state.writable = locked.writable
            state.device = locked.status.device
            state.inode = locked.status.inode
            return true
        }
    }

    /// The locked file's descriptor open for writing, kept when the lock created the file; nil otherwise or once
    /// taken. The caller owns it.
    func takeWritable() -> RegularFile? {
        state.withLock { state in
            defer { state.writable = nil }
            return state.writable
        }
    }

    /// Whether `status` is the file locked by `lockAcrossProcesses()` (false when nothing is locked).
    func isLockedFile(_ status: FileStatus) -> Bool {
        state.withLock { $0.lock != nil && $0.device == status.device && $0.inode == status.inode }
    }

    /// Releases the lock and the claim; idempotent. Call it once the file is published, failed, or its transfer
    /// ended, after any removal of its staged data.
    ///
    /// `removingEmpty`: first removes the staged file when it is empty and the file locked here (one created ahead
    /// of a first chunk that never came). Under the reservation's own lock, which a creation ahead holds while it
    /// creates the file: that creation either came first, and its file goes here, or it finds the reservation
    /// released and creates nothing. (Checked and removed apart from the release, a file created between the two was
    /// left behind until the stale-file expiry.)
    public func release(removingEmpty: Bool = false) {
        let held = state.withLock { state -> (lock: RegularFile?, writable: RegularFile?)? in
            guard !state.released else { return nil }
            state.released = true
            if removingEmpty, state.lock != nil, let status = try? directory.staging.status(of: key),
                status.kind == .regular, status.size == 0, status.device == state.device, status.inode == state.inode
            {
                try? directory.staging.removeFile(key)
            }
            defer { (state.lock, state.writable) = (nil, nil) }
            return (state.lock, state.writable)
        }
        guard let held else { return }  // released before
        held.writable?.close()  // never taken: nothing was written through it
        held.lock?.close()
        directory.dropClaim(key)
    }
}

/// A lock whose waiters sleep (a plain `pthread_mutex_t`: `futex` wait, no spinning), around a value.
///
/// Why not `Mutex`: on Linux it is a priority-inheriting futex (`FUTEX_LOCK_PI`), and the kernel spins a waiter for
/// as long as the holder runs on another CPU. Right for locks held a few instructions; wrong for one held across a
/// system call that takes milliseconds, where the spinning steals the CPU the holder's work competes for.
final class SleepingLock<Value>: @unchecked Sendable {
    private let mutex = UnsafeMutablePointer<pthread_mutex_t>.allocate(capacity: 1)
    private var value: Value  // only inside `withLock`

    init(_ value: Value) {
        self.value = value
        pthread_mutex_init(mutex, nil)
    }

    deinit {
        pthread_mutex_destroy(mutex)
        mutex.deallocate()
    }

    /// Runs `body` on the value with the lock held.
    func withLock<Result, Failure: Error>(_ body: (inout Value) throws(Failure) -> Result) throws(Failure) -> Result {
        pthread_mutex_lock(mutex)
        defer { pthread_mutex_unlock(mutex) }
        return try body(&value)
    }
}

extension ReceiveDirectory {
    /// Claims the staged file of `key` for one transfer of this process; nil when another transfer of this process
    /// holds it (busy). No system call: safe to take before anything is awaited. See `StagedReservation`.
    /// - Throws: `SystemError` EINVAL for a key that is not 64 lowercase hex digits.
    public func reserveStaged(key: String) throws(SystemError) -> StagedReservation? {
        try checkKey(key)
        guard claims.withLock({ $0.insert(key).inserted }) else { return nil }
        return StagedReservation(key: key, directory: self)
    }

    func dropClaim(_ key: String) {
        _ = claims.withLock { $0.remove(key) }
    }

    /// Opens (creating it if missing) and locks the staged file of `key`; nil when another open file holds the lock.
    /// The name is checked to still hold the locked file after locking (a transfer elsewhere may have published or
    /// removed it between the open and the lock), and opened again if not.
    ///
    /// With `creating`, a missing file is created by `DirectoryHandle.createLockedLinkedFile` (no directory lock held
    /// while its inode is allocated; locked before it is named) and returned open for writing too. The lock itself
    /// is always taken through a read-only descriptor of its own, as without: it is held until after the
    /// publishing rename, and only a read-only descriptor can be closed then without a watcher of the staging
    /// folder seeing a written file closed.
    func lockStaged(key: String, creating: Bool = false) throws(SystemError) -> (
        lock: RegularFile, status: FileStatus, writable: RegularFile?
    )? {
        if creating, !linkedCreationUnsupported.load(ordering: .relaxed) {
            // Created, locked through a descriptor of its own, then named: the name never holds it unlocked, so
            // neither the open by name nor the check of the name below is needed (`createLockedLinkedFile`).
            switch try staging.createLockedLinkedFile(key, permissions: 0o600) {
            case .created(let writable, let lock): return (lock, writable.statusAtOpen, writable)
            case .exists: break
            case .unsupported: linkedCreationUnsupported.store(true, ordering: .relaxed)
            }
        }
        for _ in 0..<8 {
            let file = try staging.createFile(key, permissions: 0o600, exclusive: false, writable: false)
            do throws(SystemError) {
                guard try file.tryLock() else {
                    file.close()
                    return nil
                }
                let locked = file.statusAtOpen  // device and inode: a lock changes neither
                if let named = try staging.status(of: key), named.kind == .regular, named.device == locked.device,
                    named.inode == locked.inode
                {
                    return (file, locked, nil)
                }
                file.close()
            } catch {
                file.close()
                throw error
            }
        }
        return nil  // the name changed under every try: it is in use
    }
}
