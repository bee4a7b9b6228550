/// A compression algorithm that a chunk can be compressed with.
///
/// A closed set of the compressors this build links (zlib always, zstd from libzstd). The wire's open set of codec
/// numbers lives with the transfer messages; this enum is what the codecs and the compression policy speak, so
/// they do not depend on the message layer.
public enum CompressionAlgorithm: String, Sendable, CaseIterable {
    /// Raw deflate (RFC 1951, no zlib or gzip wrapper) from zlib: required on every link.
    case zlib
    /// Zstandard (RFC 8878), one frame with its content size: faster at the same ratio, negotiated when both
    /// sides have it.
    case zstd

    /// The level used when the caller names none: the fastest useful level (1) for both, because chunks are
    /// compressed on the fly and compression must not become the bottleneck.
    public var defaultLevel: Int { 1 }
}
