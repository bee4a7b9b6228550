/// One file of an offer: what the receiver needs to decide, to stage the bytes and to publish the result.
///
/// The media type and pixel size let a receiver (or its user) decide about images before any byte is sent.
/// Entry layout inside an offer (at least 34 bytes):
///
/// ```
/// +------------------------+--------+-------------+--------------+------------+
/// | path str16 (1...4096)  | size   | permissions | mtimeSeconds | mtimeNanos |
/// | u16 length + UTF-8     | u64    | u16         | i64          | u32        |
/// +------------------------+--------+-------------+--------------+------------+
/// | mediaType str8 (0...127)  | pixelWidth | pixelHeight |
/// | printable ASCII           | u32        | u32         |
/// +---------------------------+------------+-------------+
/// ```
public struct OfferedFile: Equatable, Sendable {
    /// Bytes of an entry with a 1-byte path and an empty media type.
    static let minimumEncodedLength = 34

    /// Relative, "/"-separated. Only its length and UTF-8 are checked here; whether the name is acceptable
    /// (no "..", no absolute path, no NUL) is the receiver's name validator's decision.
    public var path: String
    /// Its size in bytes.
    public var size: UInt64
    /// Mode bits of the source file; receivers apply only `& 0o777`.
    public var permissions: UInt16
    /// When it was last modified on the sender's side (a resume needs it unchanged).
    public var modificationTime: FileTime
    /// E.g. "image/jpeg"; "" when unknown.
    public var mediaType: String
    /// 0 when unknown or not an image.
    public var pixelWidth: UInt32
    /// 0 when unknown or not an image.
    public var pixelHeight: UInt32

    /// An offered file with the given fields; `validate()` checks the name and the media type.
    public init(
        path: String, size: UInt64, permissions: UInt16 = 0o644, modificationTime: FileTime,
        mediaType: String = "", pixelWidth: UInt32 = 0, pixelHeight: UInt32 = 0
    ) {
        self.path = path
        self.size = size
        self.permissions = permissions
        self.modificationTime = modificationTime
        self.mediaType = mediaType
        self.pixelWidth = pixelWidth
        self.pixelHeight = pixelHeight
    }

    /// Throws `invalidField` when the path is empty or longer than 4096 UTF-8 bytes, the media type is longer
    /// than 127 bytes or not printable ASCII, or the nanoseconds are out of range.
    public func validate() throws(WireError) {
        try StringField.validate(path, "path", lengths: StringField.pathLengths)
        try modificationTime.validate()
        try StringField.validate(mediaType, "mediaType", lengths: StringField.mediaTypeLengths)
        try StringField.checkMediaType(mediaType.utf8, "mediaType")
    }

    /// Bytes of this entry on the wire.
    var encodedLength: Int {
        Self.minimumEncodedLength - 1 + path.utf8.count + mediaType.utf8.count
    }
}

extension OfferedFile {
    init(from reader: inout ByteReader) throws(WireError) {
        path = try reader.readString16("path", lengths: StringField.pathLengths)
        size = try reader.readUInt64("size")
        permissions = try reader.readUInt16("permissions")
        let seconds = Int64(bitPattern: try reader.readUInt64("mtimeSeconds"))
        modificationTime = FileTime(seconds: seconds, nanoseconds: try reader.readUInt32("mtimeNanos"))
        try modificationTime.validate()
        mediaType = try reader.readString8("mediaType", lengths: StringField.mediaTypeLengths)
        try StringField.checkMediaType(mediaType.utf8, "mediaType")
        pixelWidth = try reader.readUInt32("pixelWidth")
        pixelHeight = try reader.readUInt32("pixelHeight")
    }

    func write(to writer: inout ByteWriter) {
        writer.write(string16: path)
        writer.write(size)
        writer.write(permissions)
        writer.write(UInt64(bitPattern: modificationTime.seconds))
        writer.write(modificationTime.nanoseconds)
        writer.write(string8: mediaType)
        writer.write(pixelWidth)
        writer.write(pixelHeight)
    }
}
