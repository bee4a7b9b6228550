/// The 8 bytes each side sends first on a reliable link, before any frame.
///
/// They let a peer reject a non-ferry connection (or an incompatible version) before parsing anything else.
///
/// ```
///  0    1    2    3    4    5    6      7
/// +----+----+----+----+----+----+------+------+
/// | 46 | 45 | 52 | 52 | 59 | 00 |major |minor |   "FERRY" NUL major minor
/// +----+----+----+----+----+----+------+------+
/// ```
public enum Preface {
    /// Length of the preface in bytes.
    public static let length = 8
    /// "FERRY" followed by a NUL byte.
    static let magic: [UInt8] = [0x46, 0x45, 0x52, 0x52, 0x59, 0x00]

    /// The preface bytes for `version`: the magic, then major and minor.
    public static func encode(_ version: ProtocolVersion = .current) -> [UInt8] {
        magic + [version.major, version.minor]
    }

    /// Decodes the peer's preface from the start of `bytes`.
    ///
    /// Returns nil while fewer than 8 bytes are available. Throws `badMagic` as soon as an available byte differs
    /// from the magic (so a stray client is rejected without waiting), and `unsupportedVersion` when the major
    /// version differs from ours. A higher or lower minor version is returned as is.
    public static func decode(_ bytes: ArraySlice<UInt8>) throws(WireError) -> ProtocolVersion? {
        for (offset, expected) in magic.enumerated() {
            let index = bytes.startIndex + offset
            guard index < bytes.endIndex else { return nil }
            guard bytes[index] == expected else { throw .badMagic }
        }
        guard bytes.count >= length else { return nil }
        let version = ProtocolVersion(major: bytes[bytes.startIndex + 6], minor: bytes[bytes.startIndex + 7])
        guard version.isCompatibleWithCurrent else {
            throw .unsupportedVersion(major: version.major, minor: version.minor)
        }
        return version
    }
}
