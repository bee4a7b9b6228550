/// One file of a prepare-upload: what the sender offers, before any byte of it.
///
/// Kept raw and exact: `fileName` may hold folders and is checked by ferry's name validator in the receive path,
/// not here; `sha256` is 64 hex digits when an app sends one (1.18 and the PyPI peers under `sha256`, the Dart
/// apps up to 1.17 under `hash`, and always null there), checked where it is compared. `size` is 0...2^63-1.
public struct LocalSendFile: Equatable, Sendable {
    public var id: String
    public var fileName: String
    public var size: Int64
    /// A media type ("image/jpeg"), or a v1 kind ("image", "video", "pdf", "text", "other").
    public var fileType: String
    public var sha256: String?
    /// The text of a message sent as a file, or a small preview; nullable.
    public var preview: String?
    /// `metadata.modified` and `metadata.accessed` (RFC 3339), as sent.
    public var modified: String?
    public var accessed: String?

    public init(
        id: String, fileName: String, size: Int64, fileType: String, sha256: String? = nil, preview: String? = nil,
        modified: String? = nil, accessed: String? = nil
    ) {
        self.id = id
        self.fileName = fileName
        self.size = size
        self.fileType = fileType
        self.sha256 = sha256
        self.preview = preview
        self.modified = modified
        self.accessed = accessed
    }

    init(object: JSONObject, path: String) throws(HTTPError) {
        id = try object.string("id", in: path, maxBytes: LocalSendLimits.maxIdentifierBytes)
        fileName = try object.string("fileName", in: path, maxBytes: LocalSendLimits.maxFileNameBytes)
        guard let size = try object.optionalInteger("size", in: path, range: 0...Int64.max) else {
            throw .invalidJSON("\(path).size: missing")
        }
        self.size = size
        fileType = try object.string("fileType", in: path, maxBytes: LocalSendLimits.maxFileTypeBytes)
        let digest = LocalSendLimits.maxDigestBytes
        let hash = try object.optionalString("hash", in: path, maxBytes: digest)
        sha256 = try object.optionalString("sha256", in: path, maxBytes: digest) ?? hash
        preview = try object.optionalString("preview", in: path, maxBytes: LocalSendLimits.maxPreviewBytes)
        if let metadata = try object.optionalObject("metadata", in: path) {
            let stamp = LocalSendLimits.maxTimestampBytes
            modified = try metadata.optionalString("modified", in: path + ".metadata", maxBytes: stamp)
            accessed = try metadata.optionalString("accessed", in: path + ".metadata", maxBytes: stamp)
        }
    }

    /// The JSON object as 1.18 writes it (`sha256`, not 1.17's `hash`; `metadata` only when a time is known).
    var jsonObject: JSONObject {
        var object = JSONObject()
        object.add("id", .string(id))
        object.add("fileName", .string(fileName))
        object.add("size", .number(String(size)))
        object.add("fileType", .string(fileType))
        object.add("sha256", sha256.map { .string($0) })
        object.add("preview", preview.map { .string($0) })
        if modified != nil || accessed != nil {
            var metadata = JSONObject()
            metadata.add("modified", modified.map { .string($0) })
            metadata.add("accessed", accessed.map { .string($0) })
            object.add("metadata", .object(metadata))
        }
        return object
    }
}
