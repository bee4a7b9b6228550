/// The bounds of LocalSend's JSON messages: each body's bytes are checked before it is parsed, each count
/// while it is, each field once read (docs/LOCALSEND.md, "Wire"; docs/SECURITY.md, "Pre-authentication bounds").
///
/// Why these numbers: a device info is about 250 bytes; a prepare-upload of 10000 files with folder paths and
/// SHA-256 digests about 3 MB. Files per session are ferry's own offer bound (`Limits.maxOfferFiles`, 10000):
/// a LocalSend upload goes through the same receive path and staging as a ferry offer, so it gets the same
/// ceiling, and a phone's gallery selection stays far below it. Names are as long as ferry's transfer paths
/// (4096 bytes, `Limits.maxTransferPathLength`); the name rules themselves apply later, in the receive path.
public enum LocalSendLimits {
    /// A register, info or announcement body (a UDP announcement is at most 64 KiB anyway).
    public static let maxDeviceBodyBytes = 64 * 1024
    /// A prepare-upload request or response body (413 above).
    public static let maxPrepareUploadBytes = 4 * 1024 * 1024
    /// An error body (`{"message": ...}`) read from a peer.
    public static let maxErrorBodyBytes = 16 * 1024
    /// Files in one prepare-upload (413 above), and entries of any one object or array in a body.
    public static let maxFiles = Limits.maxOfferFiles
    /// Values (objects, arrays, strings, numbers, literals) in one prepare-upload request or response body (413
    /// above), counted as they are parsed. The per-container bound alone would let 4 MiB of small nested arrays
    /// build 2M values (~48 MB); 10000 files of about 12 values each (the file object, its 8 fields, metadata's
    /// object and 2 timestamps) plus the sender's info fit in 200000 with room for fields we do not know.
    public static let maxPrepareUploadValues = 200_000
    /// Values in one register, info, announcement or error body: a device info has about 12, so 4096 leaves room
    /// for a newer version's fields while a 64 KiB body of small arrays (up to 32000 values) is refused.
    public static let maxDeviceValues = 4096
    /// Alias and device model, in UTF-8 bytes.
    public static let maxAliasBytes = 256
    /// Fingerprint: a SHA-256 in hex is 64 bytes, an HTTP-mode random string shorter.
    public static let maxFingerprintBytes = 128
    /// Version, device type and protocol strings ("2.2", "mobile", "https").
    public static let maxShortFieldBytes = 32
    /// A file's id, a session ID, a token and a PIN.
    public static let maxIdentifierBytes = 256
    /// A file name, which may hold folders (`dir/photo.jpg`).
    public static let maxFileNameBytes = Limits.maxTransferPathLength
    /// A media type (`image/jpeg`, or a v1 kind like `image`).
    public static let maxFileTypeBytes = 255
    /// The `sha256` (or 1.17's `hash`) string: 64 hex digits expected, checked by the receive path.
    public static let maxDigestBytes = 128
    /// A preview: the text of a message sent as a file, or a small image.
    public static let maxPreviewBytes = 1024 * 1024
    /// A `modified` / `accessed` timestamp (RFC 3339).
    public static let maxTimestampBytes = 64
    /// An error body's message.
    public static let maxMessageBytes = 1024
}
