import FerrySystem
import FerryWire
import Foundation
import Synchronization

/// The chunk digests of small files (1 to `DigestCache.minimumChunks - 1` chunks), kept in one file of the cache
/// directory, `small-digests`, instead of a file each: a folder of small files sent again is offered with their
/// digests (PROTOCOL.md 11.3, digests section), so a receiver that holds them answers "already there" and no byte of
/// them moves (without this only files of 4 chunks and more had digests to offer, and a re-sent folder of small
/// files crossed the wire whole).
///
/// Bounded: at most `maxEntries` (16 384, under 2 MiB), the oldest stored dropped first. Read whole once, when first
/// used, and written whole (temporary name, rename) once per store, which a send does once, when it ends. Contents,
/// little-endian: `ferrysd1`, the entry count (4 bytes), each entry as the SHA-256 of its `DigestCache.key` (32
/// bytes), its chunk count (1 byte) and its chunk digests, then a SHA-256 of everything before it: a torn or damaged
/// file counts as empty. Two processes storing at once may lose one's entries: that costs hashing, never
/// correctness (the receiver verifies every byte, `DigestCache`).
final class SmallDigestTable: Sendable {
    /// The file.
    let path: String
    /// Entries kept at most.
    let maxEntries: Int
    static let magic = Array("ferrysd1".utf8)

    private struct Table {
        /// Chunk digests by key digest, with the order of storing (the smallest goes first).
        var entries: [[UInt8]: (order: Int, digests: [UInt8])] = [:]
        var next = 0
    }
    private let table = Mutex<Table?>(nil)

    init(directory: String, maxEntries: Int = 16_384) {
        path = directory + "/small-digests"
        self.maxEntries = maxEntries
    }

    /// The chunk digests kept under `key` (`DigestCache.key`), or nil.
    func lookup(_ key: [UInt8]) -> [UInt8]? {
        let id = SHA256Hasher.digest(key)
        return table.withLock { table in
            if table == nil { table = load() }
            return table?.entries[id]?.digests
        }
    }

    /// Keeps `entries` (key, chunk digests), dropping the oldest past `maxEntries`, and writes the file; how many.
    @discardableResult
    func store(_ entries: [(key: [UInt8], digests: [UInt8])]) -> Int {
        guard !entries.isEmpty else { return 0 }
        return table.withLock { table -> Int in
            var current = table ?? load()
            for entry in entries {
                current.entries[SHA256Hasher.digest(entry.key)] = (current.next, entry.digests)
                current.next += 1
            }
            if current.entries.count > maxEntries {
                let oldest = current.entries.sorted { $0.value.order < $1.value.order }
                for entry in oldest.prefix(current.entries.count - maxEntries) { current.entries[entry.key] = nil }
            }
            table = current
            return write(current) ? entries.count : 0
        }
    }

    /// Forgets the entry under `key`, if there is one.
    func remove(_ key: [UInt8]) {
        let id = SHA256Hasher.digest(key)
        table.withLock { table in
            var current = table ?? load()
            guard current.entries.removeValue(forKey: id) != nil else { return }
            table = current
            _ = write(current)
        }
    }

    private func load() -> Table {
        var table = Table()
        let limit = Self.magic.count + 4 + maxEntries * (33 + 3 * FileDigest.length) + FileDigest.length
        // Never through a link, never a FIFO (the read is under the table's lock: every send would wait on it).
        guard let bytes = PrivateFile.read(path, limit: limit), bytes.count >= Self.magic.count + 4 + FileDigest.length
        else { return table }
        let trailer = bytes.count - FileDigest.length
        guard bytes[..<Self.magic.count].elementsEqual(Self.magic),
            SHA256Hasher.digest(bytes[..<trailer]).elementsEqual(bytes[trailer...])
        else { return table }
        var offset = Self.magic.count
        let count = bytes[offset..<offset + 4].reversed().reduce(0) { $0 << 8 | Int($1) }
        offset += 4
        for _ in 0..<count {
            guard offset + 33 <= trailer else { return Table() }
            let id = Array(bytes[offset..<offset + 32])
            let length = Int(bytes[offset + 32]) * FileDigest.length
            offset += 33
            guard length > 0, offset + length <= trailer else { return Table() }
            table.entries[id] = (table.next, Array(bytes[offset..<offset + length]))
            table.next += 1
            offset += length
        }
        return offset == trailer ? table : Table()
    }

    private func write(_ table: Table) -> Bool {
        var bytes = Self.magic + DigestCache.littleEndian(UInt32(table.entries.count))
        for (id, entry) in table.entries.sorted(by: { $0.value.order < $1.value.order }) {
            bytes += id
            bytes.append(UInt8(entry.digests.count / FileDigest.length))
            bytes += entry.digests
        }
        bytes += SHA256Hasher.digest(bytes)
        let directory = (path as NSString).deletingLastPathComponent
        guard
            (try? FileManager.default.createDirectory(
                atPath: directory, withIntermediateDirectories: true, attributes: [.posixPermissions: 0o700])) != nil
        else { return false }
        return PrivateFile.replace(path, with: bytes)
    }
}
