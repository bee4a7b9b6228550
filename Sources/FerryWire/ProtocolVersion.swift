/// A protocol version `major.minor`, as sent in the preface and the hello.
///
/// Peers with a different major version cannot talk; a higher minor version only adds things an older peer
/// may ignore (extension bytes, ignorable frame kinds), so it is compatible.
public struct ProtocolVersion: Hashable, Sendable, Comparable, CustomStringConvertible {
    /// Changes only for incompatible changes: peers with different majors do not talk.
    public var major: UInt8
    /// Changes for compatible additions (section 8).
    public var minor: UInt8

    /// The version `major.minor`.
    public init(major: UInt8, minor: UInt8) {
        self.major = major
        self.minor = minor
    }

    /// The version this build speaks: 1.0.
    public static let current = ProtocolVersion(major: 1, minor: 0)

    /// True when a peer announcing this version can talk to us (same major).
    public var isCompatibleWithCurrent: Bool { major == Self.current.major }

    /// Orders by major, then minor.
    public static func < (lhs: ProtocolVersion, rhs: ProtocolVersion) -> Bool {
        (lhs.major, lhs.minor) < (rhs.major, rhs.minor)
    }

    /// `major.minor`, as in `1.0`.
    public var description: String { "\(major).\(minor)" }
}
