import FerrySystem
import FerryWire

extension ReceiveDirectory {
    /// The name (relative to the receive directory, as spelled on disk) under which this directory already holds a
    /// regular file of exactly `size` bytes whose file digest at `chunkSize` is `digest` (PROTOCOL.md 11.10 rule 10),
    /// at the offered `components` (or their NFD spelling), or nil. Directories are opened one component at a time,
    /// never followed through a symlink and never created; the file itself is checked by `holds` (not a symlink,
    /// the same size, hashed only then). Reads at most `size` bytes.
    /// `hashing` is told the bytes about to be hashed, before they are (the caller's budget).
    func alreadyHolds(
        _ components: [String], size: UInt64, digest: [UInt8], chunkSize: Int, hashing: (UInt64) -> Void
    ) -> String? {
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
            hashing(size)
            if Self.holds(spelling, in: directory, size: size, digest: digest, chunkSize: chunkSize) {
                return (spelled + [spelling]).joined(separator: "/")
            }
        }
        return nil
    }
}
