import FerrySystem
import FerryWire
import Foundation
import Synchronization

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

extension PreparedFile {
    /// Threads that prepare the items of one offer at once (`prepareAll`).
    static let preparingLanes = 2

    /// Every item prepared, in order, by `preparingLanes` threads taking turns, off the caller's thread; throws the
    /// failure of the first item in order that failed.
    ///
    /// Why: each file is opened, its status taken and its first 4 KiB read (`prepare`), 50-80 microseconds on this
    /// machine, and a folder of 1000 small files held its offer back by 70-80 ms on the engine's actor, a sixth of
    /// the whole send (`perf trace` of `ferry send` of 1000 files of 4-64 KiB). The receiver waits for the offer, so
    /// a second core is free meanwhile.
    ///
    /// With `digests`, each file's chunk digests are looked up in the cache on the same threads
    /// (`cachedDigests`).
    static func prepareAll(
        _ items: [TransferItem], digests: (cache: DigestCache, chunkSize: Int)? = nil
    ) async throws(TransferError) -> [PreparedFile] {
        let prepare: @Sendable (TransferItem) throws(TransferError) -> PreparedFile = { item throws(TransferError) in
            var file = try Self.prepare(item)
            if let digests, file.memory == nil {
                file.cachedDigests = digests.cache.lookup(file.status, chunkSize: digests.chunkSize)
            }
            return file
        }
        guard items.count > 1 else { return try items.map { item throws(TransferError) in try prepare(item) } }
        // Cancelling the caller stops the lanes at their next item (a folder of 100 000 files on a cold disk takes
        // seconds), and the call throws `cancelled`.
        let cancelled = Atomic<Bool>(false)
        let results = await withTaskCancellationHandler {
            await withCheckedContinuation { (done: CheckedContinuation<[PreparedResult], Never>) in
                DispatchQueue.global().async {
                    let lanes = min(preparingLanes, items.count)
                    let slots = Mutex<[PreparedResult?]>(Array(repeating: nil, count: items.count))
                    DispatchQueue.concurrentPerform(iterations: lanes) { lane in
                        for index in stride(from: lane, to: items.count, by: lanes) {
                            let result =
                                cancelled.load(ordering: .relaxed)
                                ? .failure(.cancelled)
                                : Result { () throws(TransferError) -> PreparedFile in try prepare(items[index]) }
                            slots.withLock { $0[index] = result }
                        }
                    }
                    done.resume(returning: slots.withLock { $0.map { $0! } })
                }
            }
        } onCancel: {
            cancelled.store(true, ordering: .relaxed)
        }
        if cancelled.load(ordering: .relaxed) { throw .cancelled }
        return try results.map { result throws(TransferError) in try result.get() }
    }

    typealias PreparedResult = Result<PreparedFile, TransferError>
}

/// Items checked and prepared by `TransferEngine.prepare(_:)`, for `TransferEngine.send(_:to:)`.
public struct PreparedItems: Sendable {
    let files: [PreparedFile]
    /// The chunk size of the engine that prepared them (kept digests depend on it).
    let chunkSize: Int
    /// Folders the receiver creates besides the files' own (the empty folders of a folder sent whole, PROTOCOL.md
    /// 11.3 folders section), named as the files are ("album/empty").
    public var folders: [String] = []
    /// The offer's flags (`OfferFlags.replaces`: the files replace the versions this sender sent before).
    public var flags: OfferFlags = []

    /// How many items: files and payloads.
    public var count: Int { files.count }
}
