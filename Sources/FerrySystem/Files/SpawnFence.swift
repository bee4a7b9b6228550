import Glibc

/// Keeps child processes from being started while a received file is published, for programs that embed the
/// receiving engine and also start children (a test process, an app that runs commands).
///
/// Why: a child starts with a copy of its parent's whole descriptor table, close-on-exec descriptors included,
/// and drops those copies only when it calls `exec`. A staged file's descriptor copied into a child that is still
/// between `clone` and `exec` when the engine closes its own and renames the file into place keeps the file open
/// for writing; the child's `exec` then closes the last writable reference, after the rename, and a program watching
/// the receive directory sees `IN_CLOSE_WRITE` for the published name a second time. Seen in the test suite, where
/// the engine runs in the same process as tests that start `ferry` processes. The `ferry` command starts no
/// children, so this costs it one uncontended lock per published file.
///
/// Publishing holds the fence exclusively from closing the staged file's last descriptor until the rename is done
/// (`ReceiveDirectory.publish`); a program holds it shared around each `posix_spawn` (which returns once the child
/// has called `exec`, or failed). Writers are preferred, so a stream of spawns cannot hold a publish back for long.
public enum SpawnFence {
    // nonisolated(unsafe): set once, then only used through the pthread_rwlock calls, which are thread-safe.
    nonisolated(unsafe) private static let lock: UnsafeMutablePointer<pthread_rwlock_t> = {
        let lock = UnsafeMutablePointer<pthread_rwlock_t>.allocate(capacity: 1)
        var attributes = pthread_rwlockattr_t()
        pthread_rwlockattr_init(&attributes)
        pthread_rwlockattr_setkind_np(&attributes, Int32(PTHREAD_RWLOCK_PREFER_WRITER_NONRECURSIVE_NP))
        pthread_rwlock_init(lock, &attributes)
        pthread_rwlockattr_destroy(&attributes)
        return lock
    }()

    /// Runs `body` (a `posix_spawn` and nothing that waits for other work) with the fence held shared: no file is
    /// published while it runs.
    public static func spawning<T, E: Error>(_ body: () throws(E) -> T) throws(E) -> T {
        pthread_rwlock_rdlock(lock)
        defer { pthread_rwlock_unlock(lock) }
        return try body()
    }

    /// Runs `body` (closing a published file's descriptor and renaming it into place) with the fence held
    /// exclusively: no child is between `clone` and `exec` while it runs.
    public static func publishing<T, E: Error>(_ body: () throws(E) -> T) throws(E) -> T {
        pthread_rwlock_wrlock(lock)
        defer { pthread_rwlock_unlock(lock) }
        return try body()
    }
}
