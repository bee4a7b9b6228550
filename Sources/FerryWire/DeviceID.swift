/// A device's stable 32-byte identity: the SHA-256 of its certificate.
///
/// Users compare and type it, so besides hex it has a grouped base32 form (RFC 4648 alphabet, uppercase,
/// 52 characters in 13 groups of 4, e.g. `AAAQ-EAYE-...`): base32 avoids 0/1/8/9 and the groups are easy to
/// read aloud. Sent on the wire as 32 raw bytes.
public struct DeviceID: Hashable, Sendable, CustomStringConvertible {
    /// Number of bytes.
    public static let length = 32
    /// Characters per group in the readable form.
    static let groupLength = 4

    /// The 32 bytes: the SHA-256 of the device's certificate.
    public let bytes: [UInt8]

    /// Nil unless `bytes` has exactly 32 bytes.
    public init?(bytes: [UInt8]) {
        guard bytes.count == Self.length else { return nil }
        self.bytes = bytes
    }

    /// Parses the 64-digit hex form or the base32 form (52 characters), case-insensitive, '-' optional.
    public init?(string: String) {
        let text = Self.normalised(string)
        if text.count == Self.length * 2, let bytes = Hex.bytes(text) {
            self.bytes = bytes
        } else if let bytes = Base32.decode(text, byteCount: Self.length) {
            self.bytes = bytes
        } else {
            return nil
        }
    }

    /// 64 lowercase hex digits.
    public var hex: String { Hex.string(bytes) }

    /// Uppercase base32 of all 32 bytes without separators (52 characters).
    public var base32: String { Base32.encode(bytes) }

    /// Uppercase base32 in 13 groups of 4 separated by '-'.
    public var description: String { groups.joined(separator: "-") }

    /// The first two groups, e.g. "ABCD-EFGH": enough to tell a handful of peers apart.
    public var shortDescription: String { groups.prefix(2).joined(separator: "-") }

    /// True when `userText` (case-insensitive, '-' and spaces ignored) begins the base32 or the hex form.
    /// Empty text matches nothing, so an empty `--to` never selects every peer.
    public func hasPrefix(_ userText: String) -> Bool {
        let typed = Self.normalised(userText)
        guard !typed.isEmpty else { return false }
        let upper = typed.map { Self.uppercased($0) }
        let lower = typed.map { Self.lowercased($0) }
        return Array(base32.utf8).starts(with: upper) || Array(hex.utf8).starts(with: lower)
    }

    private var groups: [String] {
        let characters = Array(base32.utf8)
        return stride(from: 0, to: characters.count, by: Self.groupLength).map { start in
            String(decoding: characters[start..<min(start + Self.groupLength, characters.count)], as: UTF8.self)
        }
    }

    /// UTF-8 bytes of `text` without '-' and whitespace.
    private static func normalised(_ text: String) -> [UInt8] {
        text.utf8.filter { $0 != UInt8(ascii: "-") && $0 != UInt8(ascii: " ") && $0 != UInt8(ascii: "\t") }
    }

    private static func uppercased(_ byte: UInt8) -> UInt8 {
        (UInt8(ascii: "a")...UInt8(ascii: "z")).contains(byte) ? byte - 32 : byte
    }

    private static func lowercased(_ byte: UInt8) -> UInt8 {
        (UInt8(ascii: "A")...UInt8(ascii: "Z")).contains(byte) ? byte + 32 : byte
    }
}
