/// Inflates one compressed chunk to exactly its declared raw length, and never further.
///
/// The declared length comes from the peer's chunk header and has already been checked against the transfer's
/// chunk size limit; this type allocates exactly that many bytes and treats every deviation (malformed data, more
/// output than declared, less, or trailing input) as `CompressionError.corrupt`, so a decompression bomb costs at
/// most one chunk's worth of memory and CPU.
public enum ChunkInflater {
    /// Decompresses `data` to exactly `rawLength` bytes.
    ///
    /// Throws `CompressionError.corrupt(...)` if the data is malformed, would inflate past `rawLength` (stopping as
    /// soon as the `rawLength`-byte buffer is full and more output remains), produces fewer bytes, or has trailing
    /// input; for zstd also when the frame declares a content size other than `rawLength`. Allocates `rawLength`
    /// bytes, never more.
    public static func inflate(
        _ data: ArraySlice<UInt8>, algorithm: CompressionAlgorithm, rawLength: Int
    ) throws(CompressionError) -> [UInt8] {
        try inflate(data, algorithm: algorithm, rawLength: rawLength, prefix: nil)
    }

    /// Decompresses one zstd frame compressed with `prefix` (the raw bytes of the file's previous chunk) to exactly
    /// `rawLength` bytes: the data of a `Codec.zstdPrefixed` chunk. Bounded as `inflate(_:algorithm:rawLength:)`;
    /// the prefix is referenced, not copied.
    public static func inflate(
        _ data: ArraySlice<UInt8>, rawLength: Int, prefix: ArraySlice<UInt8>
    ) throws(CompressionError) -> [UInt8] {
        try inflate(data, algorithm: .zstd, rawLength: rawLength, prefix: prefix)
    }

    private static func inflate(
        _ data: ArraySlice<UInt8>, algorithm: CompressionAlgorithm, rawLength: Int, prefix: ArraySlice<UInt8>?
    ) throws(CompressionError) -> [UInt8] {
        guard rawLength >= 0 else { throw .corrupt("negative raw length \(rawLength)") }
        var failure: CompressionError?
        let output = [UInt8](unsafeUninitializedCapacity: rawLength) { buffer, count in
            let destination = UnsafeMutableRawBufferPointer(buffer)
            // withUnsafeBytes only rethrows untyped errors, so the typed error travels back as a Result.
            let result = data.withUnsafeBytes { source -> Result<Void, CompressionError> in
                do throws(CompressionError) {
                    switch algorithm {
                    case .zlib: try ZlibCodec.inflate(source, into: destination)
                    case .zstd:
                        if let prefix {
                            // withUnsafeBytes only rethrows untyped errors: the failure comes back as a value.
                            let result = prefix.withUnsafeBytes { prefix -> CompressionError? in
                                do throws(CompressionError) {
                                    try ZstdCodec.decompress(source, into: destination, prefix: prefix)
                                    return nil
                                } catch {
                                    return error
                                }
                            }
                            if let result { throw result }
                        } else {
                            try ZstdCodec.decompress(source, into: destination)
                        }
                    }
                    return .success(())
                } catch {
                    return .failure(error)
                }
            }
            if case .failure(let error) = result {
                failure = error
                count = 0
            } else {
                count = rawLength
            }
        }
        if let failure { throw failure }
        return output
    }

    /// Decompresses `data`; see `inflate(_:algorithm:rawLength:)`.
    public static func inflate(
        _ data: [UInt8], algorithm: CompressionAlgorithm, rawLength: Int
    ) throws(CompressionError) -> [UInt8] {
        try inflate(data[...], algorithm: algorithm, rawLength: rawLength)
    }
}
