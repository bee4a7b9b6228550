import FerrySystem

/// The read handles a swarm member serves chunks from (PROTOCOL.md 11.11 rule 4): opened on demand, at most a given
/// number open at once (the least recently used idle one is closed to make room), each file reopened only when it is
/// still the file this member verified.
///
/// Why: a member that stays to serve held one handle per file until it left the swarm: a broadcast of 10,000 files
/// kept 10,000 descriptors. Reopening by name brings its own danger: the name may by then hold other bytes (the user
/// renamed, replaced or removed the published file), and a member must never serve bytes it did not verify (the
/// asker would cut it off as a bad relayer). So every file's identity (device and inode of the staged file its chunks
/// were written to) is kept, and a handle opened again (relative to the receive directory's descriptors, never
/// following a symbolic link) is used only when it is that inode; otherwise the file is not held any more.
struct SwarmReaders: Sendable {
    /// Where a file's verified data is: its staged file, or the path it was published under (relative to the
    /// receive directory, one component at a time).
    enum Place: Sendable, Equatable {
        case staged(key: String)
        case published(components: [String])
    }

    /// The file the chunks were verified into.
    struct Identity: Sendable, Equatable {
        var device: UInt64
        var inode: UInt64
    }

    private var handles: [Int: RegularFile] = [:]
    private var users: [Int: Int] = [:]
    /// Open files, least recently used first.
    private var order: [Int] = []
    private(set) var identities: [Int: Identity] = [:]
    private(set) var places: [Int: Place] = [:]

    /// Handles open now.
    var openCount: Int { handles.count }

    /// `file`'s chunks are written to the file `identity`, at `place`.
    mutating func verified(_ file: Int, _ identity: Identity, at place: Place) {
        identities[file] = identity
        places[file] = place
    }

    /// `file` was published: it is reopened at `place` from now on (nil: nowhere, the staged copy was dropped for an
    /// identical file already there; an open handle still reads the verified bytes).
    mutating func published(_ file: Int, at place: Place?) {
        places[file] = place
    }

    /// The open handle of `file`, marked in use (until `release`) and most recently used; nil when it is not open.
    mutating func use(_ file: Int) -> RegularFile? {
        guard let handle = handles[file] else { return nil }
        users[file, default: 0] += 1
        order.removeAll { $0 == file }
        order.append(file)
        return handle
    }

    /// Makes room for one more handle within `capacity`, closing the least recently used handles not in use; false
    /// when every open handle is in use.
    mutating func makeRoom(capacity: Int) -> Bool {
        while handles.count >= max(1, capacity) {
            guard let idle = order.first(where: { users[$0, default: 0] == 0 }) else { return false }
            order.removeAll { $0 == idle }
            handles.removeValue(forKey: idle)?.close()
        }
        return true
    }

    /// Adds the handle just opened for `file`, in use.
    mutating func add(_ file: Int, _ handle: RegularFile) {
        handles.updateValue(handle, forKey: file)?.close()
        users[file, default: 0] += 1
        order.removeAll { $0 == file }
        order.append(file)
    }

    /// A use of `file`'s handle (`use`, `add`) ended.
    mutating func release(_ file: Int) {
        guard let count = users[file] else { return }
        users[file] = count > 1 ? count - 1 : nil
    }

    /// Closes every handle (the swarm ended here).
    mutating func closeAll() {
        for handle in handles.values { handle.close() }
        handles = [:]
        users = [:]
        order = []
    }
}
