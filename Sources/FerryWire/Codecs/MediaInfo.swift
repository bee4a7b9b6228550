/// What the first bytes of a file say about it: its media type, whether it is already compressed, its pixel size.
///
/// Sent in a transfer offer (media type, pixel size) so the receiver can show what is coming, and read by the
/// compression policy: an already-compressed file (JPEG, MP4, ZIP, ...) is sent raw rather than spending CPU on
/// chunks that will not shrink.
public struct MediaInfo: Equatable, Sendable {
    /// The IANA media type, e.g. "image/jpeg"; nil when no known signature matched.
    public var mediaType: String?
    /// True when the format's payload is already compressed, so general-purpose compression will not pay.
    public var isCompressed: Bool
    /// Image width in pixels; 0 when unknown or not an image.
    public var pixelWidth: UInt32
    /// Image height in pixels; 0 when unknown or not an image.
    public var pixelHeight: UInt32

    /// What is known of a file's content: its media type, whether it is compressed already, its pixel size.
    public init(mediaType: String? = nil, isCompressed: Bool = false, pixelWidth: UInt32 = 0, pixelHeight: UInt32 = 0) {
        self.mediaType = mediaType
        self.isCompressed = isCompressed
        self.pixelWidth = pixelWidth
        self.pixelHeight = pixelHeight
    }

    /// Nothing recognised.
    public static let unknown = MediaInfo()
}
