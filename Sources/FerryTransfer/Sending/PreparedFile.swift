import FerrySystem
import FerryWire
import Foundation

/// A file ready to be offered: its local source, what the offer says of it, and what its first bytes showed.
struct PreparedFile: Sendable {
    var source: SourceFile
    var offered: OfferedFile
    var alreadyCompressed: Bool
    var status: FerrySystem.FileStatus
    /// A payload's bytes, read from memory instead of a file (`Payload`); nil for a file.
    var memory: Data? = nil
    /// When `status` was taken (seconds since 1970, just before the file was opened): `DigestCache` keeps the
    /// digests only of a file whose times lie well before it.
    var statedAt: Double = 0
    /// The chunk digests `DigestCache` kept for this file as it is now (32 bytes a chunk), or nil.
    var cachedDigests: [UInt8]? = nil

    /// Stats the file and sniffs its first bytes for the media type, image size and compressibility: 4 KiB, or up to
    /// 64 KiB for a JPEG or a ZIP (`MediaSniffer.needsMore`).
    static func prepare(_ source: SourceFile) throws(TransferError) -> PreparedFile {
        let statedAt = Date().timeIntervalSince1970
        do {
            let handle = try RegularFile.open(path: source.path)
            defer { handle.close() }
            let status = handle.statusAtOpen
            guard status.kind == .regular else {
                throw TransferError.notReadable(source.path, reason: "not a regular file")
            }
            var prefix = try handle.read(count: Int(min(status.size, UInt64(MediaSniffer.headLength))), at: 0)
            if status.size > UInt64(prefix.count), prefix.count == MediaSniffer.headLength,
                MediaSniffer.needsMore(prefix[...])
            {
                let rest = Int(min(status.size, UInt64(MediaSniffer.prefixLength))) - prefix.count
                prefix += try handle.read(count: rest, at: UInt64(prefix.count))
            }
            let media = MediaSniffer.sniff(prefix[...])
            let offered = OfferedFile(
                path: source.name, size: status.size, permissions: status.permissions & 0o777,
                modificationTime: FileTime(
                    seconds: status.modificationTime.seconds, nanoseconds: status.modificationTime.nanoseconds),
                mediaType: media.mediaType ?? "", pixelWidth: media.pixelWidth, pixelHeight: media.pixelHeight)
            return PreparedFile(
                source: source, offered: offered, alreadyCompressed: media.isCompressed, status: status,
                statedAt: statedAt)
        } catch let error as TransferError {
            throw error
        } catch {
            throw .notReadable(source.path, reason: "\(error)")
        }
    }
}

/// Items checked and prepared by `TransferEngine.prepare(_:)`, for `TransferEngine.send(_:to:)`.
public struct PreparedItems: Sendable {
    let files: [PreparedFile]
    /// The chunk size of the engine that prepared them (kept digests depend on it).
    let chunkSize: Int

    /// How many items: files and payloads.
    public var count: Int { files.count }
}
