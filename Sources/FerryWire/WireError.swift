/// Everything that can be wrong with bytes on the wire, or with a value about to be encoded.
///
/// One error type for the whole module: the session layer maps any of these from a peer to "close the link
/// with a protocol error"; none of them is ever a trap. Cases carry what was wrong so the log can say it.
public enum WireError: Error, Equatable, Sendable, CustomStringConvertible {
    /// The stream or packet does not start with ferry's magic bytes: not a ferry peer.
    case badMagic
    /// The peer speaks a protocol major version (or datagram/beacon version) this build cannot talk.
    case unsupportedVersion(major: UInt8, minor: UInt8)
    /// A frame header announced a payload longer than the decoder's current maximum.
    case frameTooLarge(length: UInt32, limit: Int)
    /// A frame kind without the ignorable bit that this version does not know.
    case unknownCriticalFrame(kind: UInt16)
    /// Structurally broken bytes; the string names what, e.g. "hello: truncated at deviceID".
    case malformed(String)
    /// A payload over its limit (encoding refused, or received).
    case payloadTooLarge(length: Int, limit: Int)
    /// A field with a value outside its rules, e.g. "sessionID: empty", "displayName: invalid UTF-8".
    case invalidField(String)

    /// What was wrong with the bytes, for logs and error messages.
    public var description: String {
        switch self {
        case .badMagic:
            "The peer did not start with the ferry magic bytes, so it is not a ferry peer."
        case .unsupportedVersion(let major, let minor):
            "The peer speaks ferry protocol version \(major).\(minor), which is incompatible with version "
                + "\(ProtocolVersion.current)."
        case .frameTooLarge(let length, let limit):
            "The peer announced a frame of \(length) bytes, more than the limit of \(limit) bytes."
        case .unknownCriticalFrame(let kind):
            "The peer sent a frame of unknown critical kind 0x\(Hex.string(UInt64(kind), width: 4)) "
                + "that this version cannot skip."
        case .malformed(let what):
            "The peer sent malformed data (\(what))."
        case .payloadTooLarge(let length, let limit):
            "A payload of \(length) bytes exceeds the limit of \(limit) bytes."
        case .invalidField(let what):
            "A field has an invalid value (\(what))."
        }
    }
}
