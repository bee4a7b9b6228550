import FerrySystem
import Foundation

/// What `ReceiveDirectory.removeStaged(untouchedFor:now:)` removed, and what it had to leave.
public struct StagedRemoval: Sendable, Equatable {
    /// Staged files removed.
    public var files: Int
    /// Their bytes.
    public var bytes: UInt64
    /// Staged files kept because a transfer (of this or another process) holds them.
    public var inUse: Int

    /// A count of removed and kept staged files (all zero by default).
    public init(files: Int = 0, bytes: UInt64 = 0, inUse: Int = 0) {
        self.files = files
        self.bytes = bytes
        self.inUse = inUse
    }
}

extension ReceiveDirectory {
    /// Removes the staged data of interrupted transfers (the files of `.ferry-staging` named by a key) whose last
    /// write is more than `age` before `now`, or every one when `age` is nil; returns what it removed.
    ///
    /// A staged file a transfer holds (its `flock`: a resume in progress here or in another `ferry receive` on
    /// the same directory) is kept and counted in `inUse`; other errors are ignored (a file that cannot be removed
    /// now is tried again next time). Names that are not keys are never touched.
    public func removeStaged(untouchedFor age: Duration?, now: Date = Date()) -> StagedRemoval {
        var cutoff = Double.infinity
        if let age {
            let (seconds, attoseconds) = age.components
            cutoff = now.timeIntervalSince1970 - (Double(seconds) + Double(attoseconds) / 1e18)
        }
        var result = StagedRemoval()
        guard let names = try? staging.entries() else { return result }
        for name in names where Self.isKey(name) {
            guard let status = try? staging.status(of: name), status.kind == .regular else { continue }
            let modified = Double(status.modificationTime.seconds) + Double(status.modificationTime.nanoseconds) / 1e9
            guard modified < cutoff else { continue }
            guard let file = try? staging.openFile(name, writable: false) else { continue }
            defer { file.close() }
            guard (try? file.tryLock()) == true else {
                result.inUse += 1
                continue
            }
            if (try? staging.removeFile(name)) != nil {
                result.files += 1
                result.bytes += status.size
            }
        }
        return result
    }
}
