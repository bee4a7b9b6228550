/// Compressed bytes from a peer that cannot be inflated to exactly the size the peer declared.
///
/// The only failure of inflation: malformed data, data that would inflate past its declared size (a decompression
/// bomb), data that inflates to fewer bytes, or bytes after the end of the compressed stream. The transfer layer
/// treats any of these as a protocol error of the peer (or a corrupted chunk), never a trap.
public enum CompressionError: Error, Equatable, Sendable, CustomStringConvertible {
    /// What was wrong, e.g. "zlib: inflates past 1048576 bytes".
    case corrupt(String)

    /// What failed, for logs and error messages.
    public var description: String {
        switch self {
        case .corrupt(let what): "Corrupt compressed data (\(what))."
        }
    }
}
