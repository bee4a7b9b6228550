import FerryStateMachines
import FerrySystem
import FerryWire
import Foundation

/// Bytes in memory sent as one entry of an offer, as a file would be: the receiver sees a name, a size and a media
/// type, and cannot tell it from a file (the wire is the same, PROTOCOL.md 11.3). Chunked, compressed, checked and
/// resumed like a file; the receiver publishes it as a file or, when its `TransferConfiguration.memoryDelivery`
/// takes it, hands it to the application in memory (`FileOutcome.payload`).
public struct Payload: Sendable, Equatable {
    /// Its name inside the transfer: a relative path ("photo.jpg", "notes/today.txt"), validated as a received
    /// name is (PROTOCOL.md 11.9).
    public var name: String
    /// The bytes.
    public var data: Data
    /// Its media type ("image/png"); empty: sniffed from the bytes as a file's is (or left empty if unknown).
    public var mediaType: String

    /// A payload of `data` named `name`, with `mediaType` (empty: sniffed).
    public init(name: String, data: Data, mediaType: String = "") {
        self.name = name
        self.data = data
        self.mediaType = mediaType
    }
}

/// One entry of an offer: a file on disk or a payload in memory. One `TransferEngine.send(_:to:)` may mix them.
public enum TransferItem: Sendable, Equatable {
    /// A file on disk.
    case file(SourceFile)
    /// Bytes in memory.
    case payload(Payload)

    /// Its name inside the transfer.
    public var name: String {
        switch self {
        case .file(let file): file.name
        case .payload(let payload): payload.name
        }
    }
}

extension PreparedFile {
    /// The modification time, permissions and file identity a payload is offered with: now, 0644, none.
    static func prepare(_ payload: Payload) throws(TransferError) -> PreparedFile {
        guard !payload.name.isEmpty else { throw .emptyPath }
        if case .failure(let error) = NameValidator.components(of: payload.name) {
            throw .invalidPayloadName(payload.name, reason: "\(error)")
        }
        let now = Date().timeIntervalSince1970
        let seconds = Int64(now.rounded(.down))
        let nanoseconds = UInt32(((now - Double(seconds)) * 1e9).rounded(.down).clamped(0, 999_999_999))
        let media = MediaSniffer.sniff([UInt8](payload.data.prefix(65_536))[...])
        let offered = OfferedFile(
            path: payload.name, size: UInt64(payload.data.count), permissions: 0o644,
            modificationTime: FileTime(seconds: seconds, nanoseconds: nanoseconds),
            mediaType: payload.mediaType.isEmpty ? media.mediaType ?? "" : payload.mediaType,
            pixelWidth: media.pixelWidth, pixelHeight: media.pixelHeight)
        // The wire's rules (a media type of at most 127 printable ASCII bytes, no spaces): checked here, so that the
        // offer's encoder never meets an entry it must refuse.
        do throws(WireError) {
            try offered.validate()
        } catch {
            throw .invalidPayloadName(payload.name, reason: "\(error)")
        }
        let status = FerrySystem.FileStatus(
            size: offered.size, permissions: 0o644, kind: .regular,
            modificationTime: FileTimestamp(seconds: seconds, nanoseconds: nanoseconds), device: 0, inode: 0)
        return PreparedFile(
            source: SourceFile(path: "payload \(payload.name)", name: payload.name), offered: offered,
            alreadyCompressed: media.isCompressed, status: status, memory: payload.data)
    }

    /// A file's or a payload's.
    static func prepare(_ item: TransferItem) throws(TransferError) -> PreparedFile {
        switch item {
        case .file(let file): try prepare(file)
        case .payload(let payload): try prepare(payload)
        }
    }
}

extension Double {
    fileprivate func clamped(_ low: Double, _ high: Double) -> Double { Swift.min(Swift.max(self, low), high) }
}

extension Payload {
    /// The media type that marks an entry as a short text message (`ferry send --text`; PROTOCOL.md 11.3).
    public static let messageMediaType = "text/x-ferry-message"
    /// The longest text message, in UTF-8 bytes (64 KiB).
    public static let maxMessageBytes = 65_536

    /// `text` as a message entry named `name` (`message.txt` unless that is taken by another entry).
    public static func message(_ text: String, name: String = "message.txt") -> Payload {
        Payload(name: name, data: Data(text.utf8), mediaType: messageMediaType)
    }

    /// Whether a received entry is a text message this side shows: marked, and not longer than `maxMessageBytes`.
    public static func isMessage(_ mediaType: String, size: UInt64) -> Bool {
        mediaType == messageMediaType && size <= UInt64(maxMessageBytes)
    }
}
