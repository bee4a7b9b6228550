import FerrySystem
import FerryWire

extension FileDigest {
    /// Reads `file` from `start` (a multiple of `chunkSize`) to `end`, `chunkSize` bytes at a time, and adds the
    /// digest of each chunk: the same chunks, in the same order, as a transfer of the file cuts. False when the
    /// file ends before `end` (the chunks read so far are added).
    public func add(chunksOf file: RegularFile, from start: UInt64, to end: UInt64, chunkSize: Int) throws(SystemError)
        -> Bool
    {
        precondition(chunkSize > 0 && start % UInt64(chunkSize) == 0, "chunks from \(start) of \(chunkSize) bytes")
        var offset = start
        while offset < end {
            let count = Int(min(UInt64(chunkSize), end - offset))
            let bytes = try file.read(count: count, at: offset)
            guard bytes.count == count else { return false }
            bytes.withUnsafeBytes { _ = add(chunk: $0) }
            offset += UInt64(count)
        }
        return true
    }

    /// The file digest of the whole file at `path` (PROTOCOL.md 11.7) with chunks of `chunkSize` bytes, as a sender
    /// offering it with that chunk size puts it in `fileEnd`: what `ferry hash` prints. Reads to the end of the file
    /// (not to a size taken before), so a file that grows while it is read is hashed as far as it got.
    public static func ofFile(path: String, chunkSize: Int) throws(SystemError) -> [UInt8] {
        let file = try RegularFile.open(path: path)
        defer { file.close() }
        guard try file.status().kind == .regular else {
            throw SystemError(call: "hash \(path) (not a regular file)", errno: .invalidArgument)
        }
        file.adviseSequential()
        let digest = FileDigest()
        var offset: UInt64 = 0
        while true {
            let bytes = try file.read(count: chunkSize, at: offset)
            if !bytes.isEmpty { bytes.withUnsafeBytes { _ = digest.add(chunk: $0) } }
            guard bytes.count == chunkSize else { break }
            offset += UInt64(chunkSize)
        }
        return digest.finalize()
    }
}
