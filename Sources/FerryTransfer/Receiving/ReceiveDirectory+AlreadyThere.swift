import FerrySystem
import FerryWire

extension ReceiveDirectory {
    /// The file this directory already holds as a regular file of exactly `size` bytes whose file digest at
    /// `chunkSize` is `digest` (PROTOCOL.md 11.10 rule 10), at the offered `components` (or their NFD spelling), or
    /// nil. Directories are opened one component at a time, never followed through a symlink and never created; the
    /// file itself is checked by `heldStatus` (not a symlink, the same size, hashed only then, unchanged meanwhile).
    /// Reads at most `size` bytes a spelling. `hashing` is asked before each spelling is hashed, with its size, and
    /// false stops the search (the caller's budget: both spellings count). `stop`, once set, stops hashing between
    /// chunks (the sender left).
    func alreadyHolds(
        _ components: [String], size: UInt64, digest: [UInt8], chunkSize: Int, stop: HashStop? = nil,
        hashing: (UInt64) -> Bool = { _ in true }
    ) -> HeldFile? {
        guard let fileName = components.last else { return nil }
        var directory = root
        var opened: [DirectoryHandle] = []
        defer { opened.forEach { $0.close() } }
        var spelled: [String] = []
        for component in components.dropLast() {
            let spelling = Self.existingSpelling(of: component, in: directory)
            guard let next = try? directory.subdirectory(spelling, create: false) else { return nil }
            opened.append(next)
            directory = next
            spelled.append(spelling)
        }
        for spelling in [fileName, Self.decomposedTwin(fileName)].compactMap({ $0 }) {
            guard let status = try? directory.status(of: spelling), status.kind == .regular, status.size == size
            else { continue }
            guard hashing(size) else { return nil }
            if let held = Self.heldStatus(
                spelling, in: directory, size: size, digest: digest, chunkSize: chunkSize, stop: stop)
            {
                return HeldFile(name: (spelled + [spelling]).joined(separator: "/"), status: held)
            }
        }
        return nil
    }

    /// The status of `name` in `directory` when it is a regular file (not followed if a symlink) of `size` bytes
    /// whose file digest at `chunkSize` is `digest`, the same file (device, inode, size, times) before and after it
    /// was hashed; nil otherwise, or when `stop` was set between two chunks.
    static func heldStatus(
        _ name: String, in directory: DirectoryHandle, size: UInt64, digest: [UInt8], chunkSize: Int, stop: HashStop?
    ) -> FerrySystem.FileStatus? {
        guard let status = try? directory.status(of: name), status.kind == .regular, status.size == size,
            let file = try? directory.openFile(name, writable: false)
        else { return nil }
        defer { file.close() }
        guard let opened = try? file.status(), opened.isUnchanged(since: status) else { return nil }
        let hasher = FileDigest()
        var offset: UInt64 = 0
        while offset < size {
            if stop?.isSet == true { return nil }
            let end = min(offset + UInt64(chunkSize), size)
            guard (try? hasher.add(chunksOf: file, from: offset, to: end, chunkSize: chunkSize)) == true else {
                return nil
            }
            offset = end
        }
        guard (try? file.read(count: 1, at: size))?.isEmpty == true,  // it grew meanwhile
            let after = try? file.status(), after.isUnchanged(since: status), hasher.finalize() == digest
        else { return nil }
        return status
    }

    /// The status of the file at `name` (relative, as `alreadyHolds` spelled it), its directories opened without
    /// following a symlink; nil when it is not there.
    func currentStatus(ofHeld name: String) -> FerrySystem.FileStatus? {
        let components = name.split(separator: "/").map(String.init)
        guard let fileName = components.last else { return nil }
        var directory = root
        var opened: [DirectoryHandle] = []
        defer { opened.forEach { $0.close() } }
        for component in components.dropLast() {
            guard let next = try? directory.subdirectory(component, create: false) else { return nil }
            opened.append(next)
            directory = next
        }
        return try? directory.status(of: fileName)
    }
}
