import Dispatch
import FerryWire
import Glibc
import Synchronization

/// One file (or a text) as a LocalSend receiver is offered it: its name (folders joined by `/`), size, media type
/// and whole-content SHA-256, computed before the offer (docs/LOCALSEND.md, "Sending").
public struct LocalSendOutgoing: Sendable, Equatable {
    /// Where the bytes come from.
    public enum Source: Sendable, Equatable {
        /// A regular file, read piece by piece when uploaded.
        case file(path: String)
        /// A text message (its UTF-8 bytes are the upload body, when the receiver wants one).
        case text(String)
    }

    /// The bytes' source.
    public let source: Source
    /// `fileName`: the name the receiver stores it under, folders joined by `/`.
    public let name: String
    /// `size`: the bytes hashed (the file as read to its end, or the text's UTF-8 length).
    public let size: Int64
    /// `fileType`: a media type from the name's extension, `application/octet-stream` when unknown, `text/plain`
    /// for a text.
    public let fileType: String
    /// `sha256`: the SHA-256 of the content, 64 lower-case hex digits.
    public let sha256: String
    /// The file as it was hashed (nil for a text): the upload refuses a file that is no longer this one.
    public var hashed: FileState?
    /// `sha256` as bytes (empty for a text): an upload's bytes are checked against it as they go out.
    public var digest: [UInt8] = []

    /// What identifies a file and its content's version: device, inode, size, modification and change times, and
    /// whether the path given was a symbolic link (else the upload opens it with O_NOFOLLOW).
    public struct FileState: Sendable, Equatable {
        /// `st_dev`.
        public var device: UInt64
        /// `st_ino`.
        public var inode: UInt64
        /// `st_size`.
        public var size: Int64
        /// `st_mtim`: seconds and nanoseconds.
        public var modified: [Int]
        /// `st_ctim`: seconds and nanoseconds.
        public var changed: [Int]
        /// Whether the path given was a symbolic link (then it is followed when opened again).
        public var viaLink: Bool

        init(_ status: stat, viaLink: Bool) {
            device = UInt64(status.st_dev)
            inode = UInt64(status.st_ino)
            size = Int64(status.st_size)
            modified = [status.st_mtim.tv_sec, status.st_mtim.tv_nsec]
            changed = [status.st_ctim.tv_sec, status.st_ctim.tv_nsec]
            self.viaLink = viaLink
        }

        /// Whether the file open at `descriptor` is still the one hashed, unchanged.
        public func matches(_ descriptor: Int32) -> Bool {
            var status = stat()
            guard fstat(descriptor, &status) == 0 else { return false }
            return FileState(status, viaLink: viaLink) == self
        }
    }

    /// The size of each read while hashing (and the most of the file held in memory at once).
    public static let readSize = 1 << 20

    /// The text message `text`: one `text/plain` file whose `preview` is the text (apps show it instead of
    /// storing a file) and whose body, if the receiver asks for it, is the text's UTF-8 bytes.
    public static func text(_ text: String) -> LocalSendOutgoing {
        let bytes = Array(text.utf8)
        return LocalSendOutgoing(
            source: .text(text), name: "message.txt", size: Int64(bytes.count), fileType: "text/plain",
            sha256: Hex.string(SHA256Hasher.digest(bytes)))
    }

    /// `file(path:name:)` on a dispatch thread (not the cooperative pool, which the session's work shares), stopping
    /// with `.cancelled` within a MiB when the calling task is cancelled (Ctrl-C while a big file is hashed).
    public static func hashing(path: String, name: String) async throws(LocalSendSendError) -> LocalSendOutgoing {
        let stop = StopFlag()
        let result: Result<LocalSendOutgoing, LocalSendSendError> = await withTaskCancellationHandler {
            await withCheckedContinuation { continuation in
                DispatchQueue.global().async {
                    continuation.resume(
                        returning: Result { () throws(LocalSendSendError) in
                            try file(path: path, name: name, stop: stop)
                        })
                }
            }
        } onCancel: {
            stop.value.store(true, ordering: .relaxed)
        }
        return try result.get()
    }

    /// Set when hashing should stop.
    final class StopFlag: Sendable {
        let value = Atomic<Bool>(false)
    }

    /// The regular file at `path`, offered as `name`: hashed here, `readSize` bytes at a time, to its end.
    /// - Throws: `LocalSendSendError.unreadable` when it cannot be opened or read, or is not a regular file.
    /// Its device, inode, size and times are kept (`hashed`), and must be the same after hashing.
    public static func file(path: String, name: String) throws(LocalSendSendError) -> LocalSendOutgoing {
        try file(path: path, name: name, stop: nil)
    }

    static func file(path: String, name: String, stop: StopFlag?) throws(LocalSendSendError) -> LocalSendOutgoing {
        var link = stat()
        let viaLink = lstat(path, &link) == 0 && link.st_mode & S_IFMT == S_IFLNK
        let descriptor = open(path, O_RDONLY | O_CLOEXEC)
        guard descriptor >= 0 else { throw .unreadable(path: path, reason: Self.errorText()) }
        defer { close(descriptor) }
        var status = stat()
        guard fstat(descriptor, &status) == 0 else { throw .unreadable(path: path, reason: Self.errorText()) }
        guard status.st_mode & S_IFMT == S_IFREG else { throw .unreadable(path: path, reason: "not a regular file") }
        let before = FileState(status, viaLink: viaLink)
        let hasher = SHA256Hasher()
        var buffer = [UInt8](repeating: 0, count: readSize)
        var offset: Int64 = 0
        while true {
            if stop?.value.load(ordering: .relaxed) == true || Task.isCancelled { throw .cancelled }
            let count = buffer.withUnsafeMutableBytes { pread(descriptor, $0.baseAddress, readSize, off_t(offset)) }
            if count < 0 {
                if errno == EINTR { continue }
                throw .unreadable(path: path, reason: Self.errorText())
            }
            if count == 0 { break }
            buffer.withUnsafeBytes { hasher.update(UnsafeRawBufferPointer(rebasing: $0[0..<count])) }
            offset += Int64(count)
        }
        guard before.matches(descriptor), before.size == offset else {
            throw .unreadable(path: path, reason: "it changed while it was hashed")
        }
        let digest = hasher.finalize()
        return LocalSendOutgoing(
            source: .file(path: path), name: name, size: offset, fileType: fileType(forName: name),
            sha256: Hex.string(digest), hashed: before, digest: digest)
    }

    /// A media type from the extension of `name` (case ignored), `application/octet-stream` when unknown. The
    /// apps show an icon and preview by it; nothing else depends on it.
    public static func fileType(forName name: String) -> String {
        let last = name.split(separator: "/").last.map(String.init) ?? name
        guard let dot = last.lastIndex(of: "."), dot != last.startIndex else { return "application/octet-stream" }
        let suffix = last[last.index(after: dot)...].lowercased()
        return mediaTypes[suffix] ?? "application/octet-stream"
    }

    private static let mediaTypes: [String: String] = [
        "jpg": "image/jpeg", "jpeg": "image/jpeg", "png": "image/png", "gif": "image/gif", "webp": "image/webp",
        "heic": "image/heic", "heif": "image/heif", "bmp": "image/bmp", "svg": "image/svg+xml",
        "tif": "image/tiff", "tiff": "image/tiff", "mp4": "video/mp4", "mov": "video/quicktime",
        "mkv": "video/x-matroska", "webm": "video/webm", "avi": "video/x-msvideo", "mp3": "audio/mpeg",
        "m4a": "audio/mp4", "ogg": "audio/ogg", "opus": "audio/opus", "flac": "audio/flac", "wav": "audio/wav",
        "pdf": "application/pdf", "zip": "application/zip", "gz": "application/gzip", "tar": "application/x-tar",
        "apk": "application/vnd.android.package-archive", "json": "application/json", "txt": "text/plain",
        "md": "text/markdown", "html": "text/html", "htm": "text/html", "csv": "text/csv",
    ]

    private static func errorText() -> String {
        String(cString: strerror(errno)).lowercased()
    }
}
