import FerryWire
import FuzzSupport

/// libFuzzer entry: bounded inflation of one chunk's data with the raw length its header declares.
///
/// Input: a byte whose bit 0 picks zlib (0) or zstd (1) and bit 1 (with zstd) a zstdPrefixed chunk, a u24 declared
/// raw length (taken modulo 4 MiB + 1, the largest a chunk may declare), for a prefixed chunk a u16 prefix length
/// and the prefix (the previous chunk's raw bytes), then the compressed data. Invariants: inflation yields exactly
/// the declared length or throws `CompressionError`; what inflates to n bytes refuses n - 1 (never past the bound) and n + 1
/// (never short); and a small result compressed again inflates back to itself.
@_cdecl("LLVMFuzzerTestOneInput")
public func fuzz(_ data: UnsafePointer<UInt8>?, _ size: Int) -> CInt {
    var input = FuzzInput(data, size)
    let mode = input.takeByte()
    let algorithm: CompressionAlgorithm = mode & 1 == 0 ? .zlib : .zstd
    let rawLength = Int(input.takeInteger(byteCount: 3) % UInt64(Limits.maxChunkSize + 1))
    if algorithm == .zstd, mode & 2 != 0 {
        let prefix = input.takeBytes(Int(input.takeInteger(byteCount: 2)))[...]
        let compressed = input.takeRest()
        guard let output = try? ChunkInflater.inflate(compressed[...], rawLength: rawLength, prefix: prefix) else {
            return 0
        }
        Invariant.check(output.count == rawLength, "prefixed inflated to \(output.count) of \(rawLength) bytes")
        if rawLength > 0 {
            let shorter = try? ChunkInflater.inflate(compressed[...], rawLength: rawLength - 1, prefix: prefix)
            Invariant.check(shorter == nil, "prefixed inflated into a buffer smaller than its output")
        }
        let longer = try? ChunkInflater.inflate(compressed[...], rawLength: rawLength + 1, prefix: prefix)
        Invariant.check(longer == nil, "prefixed inflated short of its declared length without an error")
        if rawLength <= 256 * 1024, let again = ChunkCompressor.compress(output, level: 1, prefix: Array(prefix)) {
            let back = try? ChunkInflater.inflate(again[...], rawLength: rawLength, prefix: prefix)
            Invariant.check(back == output, "prefixed compress -> inflate round trip differs")
        }
        return 0
    }
    let compressed = input.takeRest()

    guard let output = try? ChunkInflater.inflate(compressed, algorithm: algorithm, rawLength: rawLength) else {
        return 0
    }
    Invariant.check(output.count == rawLength, "\(algorithm) inflated to \(output.count) of \(rawLength) bytes")
    if rawLength > 0 {
        let shorter = try? ChunkInflater.inflate(compressed, algorithm: algorithm, rawLength: rawLength - 1)
        Invariant.check(shorter == nil, "\(algorithm) inflated into a buffer smaller than its output")
    }
    let longer = try? ChunkInflater.inflate(compressed, algorithm: algorithm, rawLength: rawLength + 1)
    Invariant.check(longer == nil, "\(algorithm) inflated short of its declared length without an error")
    if rawLength <= 256 * 1024, let again = ChunkCompressor.compress(output, algorithm: algorithm) {
        let back = try? ChunkInflater.inflate(again, algorithm: algorithm, rawLength: rawLength)
        Invariant.check(back == output, "\(algorithm) compress -> inflate round trip differs")
    }
    return 0
}

@_cdecl("FuzzInflate_main")
func main(_ argc: CInt, _ argv: UnsafeMutablePointer<UnsafeMutablePointer<CChar>?>?) -> CInt {
    FuzzDriver.run(argc, argv, fuzz)
}
