/// SplitMix64: a tiny, fast, seedable pseudo-random generator for test data (not for secrets).
///
/// Why not `SystemRandomNumberGenerator`: test files must be the same bytes on every run and every
/// machine, so a failure can be reproduced from its seed; SplitMix64 is a few wrapping operations per
/// eight bytes, which keeps a 1 GiB file within seconds.
public struct SplitMix64: RandomNumberGenerator, Sendable {
    private var state: UInt64

    public init(seed: UInt64) {
        state = seed
    }

    public mutating func next() -> UInt64 {
        state &+= 0x9E37_79B9_7F4A_7C15
        var z = state
        z = (z ^ (z >> 30)) &* 0xBF58_476D_1CE4_E5B9
        z = (z ^ (z >> 27)) &* 0x94D0_49BB_1331_11EB
        return z ^ (z >> 31)
    }

    /// A value in `0..<bound` (bound > 0); the tiny modulo bias does not matter for test data.
    public mutating func below(_ bound: Int) -> Int {
        precondition(bound > 0, "bound must be positive")
        return Int(truncatingIfNeeded: next() % UInt64(bound))
    }

    /// Fills `buffer` with the next bytes of the stream, eight at a time (little-endian).
    ///
    /// The stream depends only on the seed, so filling in pieces of any multiple of eight bytes gives
    /// the same bytes as filling once; a shorter last piece takes the first bytes of the next value.
    public mutating func fill(_ buffer: UnsafeMutableRawBufferPointer) {
        let words = buffer.count / 8
        for index in 0..<words {
            buffer.storeBytes(of: next().littleEndian, toByteOffset: index * 8, as: UInt64.self)
        }
        let rest = buffer.count - words * 8
        if rest > 0 {
            var last = next().littleEndian
            withUnsafeBytes(of: &last) { bytes in
                for index in 0..<rest { buffer[words * 8 + index] = bytes[index] }
            }
        }
    }

    /// `count` bytes, one value of the stream each (`UInt8.random(in:using:)`): the byte stream the wire fuzz
    /// tests were written against, so their seeds keep giving the same inputs.
    public mutating func bytes(count: Int) -> [UInt8] {
        (0..<count).map { _ in UInt8.random(in: 0...255, using: &self) }
    }
}
