import FerrySystem
import Foundation

/// Where `ChunkSource` reads the bytes of one offered entry: a file on disk, or a payload in memory.
///
/// Why one type for both: the chunk source reads, hashes, checksums, compresses and caches the same way whatever the
/// bytes come from; only reading and the "unchanged since offered" check differ. A file is read with `pread` and its
/// status is taken again after every read; a payload's bytes cannot change (a `Data` is a value), so its status is
/// the one it was offered with, always.
enum SourceHandle: Sendable {
    /// A file, open for reading.
    case file(RegularFile)
    /// A payload's bytes and the status it was offered with.
    case memory(Data, status: FerrySystem.FileStatus)

    /// The payload's bytes when there are some, else the file at `path`, opened for reading.
    static func open(path: String, memory: Data?, status: FerrySystem.FileStatus) throws(SystemError) -> SourceHandle {
        if let memory { return .memory(memory, status: status) }
        return .file(try RegularFile.open(path: path))
    }

    /// Up to `count` bytes at `offset` (fewer at the end).
    func read(count: Int, at offset: UInt64) throws(SystemError) -> [UInt8] {
        switch self {
        case .file(let file):
            return try file.read(count: count, at: offset)
        case .memory(let data, _):
            guard offset < UInt64(data.count) else { return [] }
            let start = data.startIndex + Int(offset)
            return [UInt8](data[start..<min(start + count, data.endIndex)])
        }
    }

    /// The file's status now; a payload's never changes.
    func status() throws(SystemError) -> FerrySystem.FileStatus {
        switch self {
        case .file(let file): try file.status()
        case .memory(_, let status): status
        }
    }

    func adviseSequential() {
        if case .file(let file) = self { file.adviseSequential() }
    }

    func close() {
        if case .file(let file) = self { file.close() }
    }
}
