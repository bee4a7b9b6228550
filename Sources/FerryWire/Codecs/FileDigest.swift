import Synchronization

/// The ferry file digest (PROTOCOL.md 11.7): the SHA-256 over the chunk digests of a file, in offset order.
///
/// A chunk digest is the SHA-256 of one chunk's raw bytes (the `sha256` of a `Chunk`); the file is cut into chunks
/// of the offer's chunk size, so the digest depends on it. Why a digest of digests: each byte is hashed once, for its
/// chunk, and the file digest follows from 32 bytes per chunk, so neither side hashes a file twice, a resumed prefix
/// is verified chunk by chunk, and a chunk can be checked on its own wherever it came from. An empty file has no
/// chunks: its digest is the SHA-256 of the empty string.
///
/// Fed in offset order (`add(chunkDigest:)`), it keeps only the running SHA-256: memory does not grow with the file.
/// A `final class` like the `SHA256Hasher` it wraps, so that the transfer engine can keep it in a record and hand
/// it from task to task (one task uses it at a time).
public final class FileDigest: Sendable {
    /// Bytes of a chunk digest and of a file digest.
    public static let length = SHA256Hasher.digestLength

    private let hasher = SHA256Hasher()
    /// The chunk digests added, in order, when asked to keep them (`init(keepingChunkDigests:)`); else nil.
    private let kept: Mutex<[UInt8]>?

    /// A digest of no chunks yet; `keepingChunkDigests`: it also keeps every chunk digest added (32 bytes a chunk),
    /// for `chunkDigests`.
    public init(keepingChunkDigests: Bool = false) {
        kept = keepingChunkDigests ? Mutex([]) : nil
    }

    /// Appends the digest of the next chunk (32 bytes).
    public func add(chunkDigest: [UInt8]) {
        precondition(chunkDigest.count == Self.length, "a chunk digest of \(chunkDigest.count) bytes")
        hasher.update(chunkDigest)
        kept?.withLock { $0 += chunkDigest }
    }

    /// Hashes the next chunk's raw bytes, appends its digest and returns it.
    @discardableResult
    public func add(chunk raw: UnsafeRawBufferPointer) -> [UInt8] {
        let digest = Self.chunkDigest(raw)
        hasher.update(digest)
        kept?.withLock { $0 += digest }
        return digest
    }

    /// Every chunk digest added so far, in order (32 bytes each; `finalize` does not clear them), when this digest
    /// keeps them; else nil.
    public var chunkDigests: [UInt8]? {
        kept?.withLock { $0 }
    }

    /// The file digest of `chunkDigests` (32 bytes a chunk, in offset order).
    public static func of(chunkDigests: [UInt8]) -> [UInt8] {
        SHA256Hasher.digest(chunkDigests)
    }

    /// The file digest of every chunk added so far; the value then starts over, empty.
    public func finalize() -> [UInt8] {
        hasher.finalize()
    }

    /// The chunk digest of `raw`: its SHA-256.
    public static func chunkDigest(_ raw: UnsafeRawBufferPointer) -> [UInt8] {
        SHA256Hasher.digest(raw)
    }

    /// The chunk digest of `raw` (an array, a slice or any other sequence of bytes).
    public static func chunkDigest(_ raw: some Sequence<UInt8>) -> [UInt8] {
        SHA256Hasher.digest(raw)
    }

    /// The file digest of `bytes` (a whole file in memory) cut into chunks of `chunkSize` bytes.
    public static func of(_ bytes: [UInt8], chunkSize: Int) -> [UInt8] {
        precondition(chunkSize > 0, "chunk size \(chunkSize)")
        let digest = FileDigest()
        var start = 0
        bytes.withUnsafeBytes { buffer in
            while start < buffer.count {
                let end = min(start + chunkSize, buffer.count)
                digest.add(chunk: UnsafeRawBufferPointer(rebasing: buffer[start..<end]))
                start = end
            }
        }
        return digest.finalize()
    }
}
