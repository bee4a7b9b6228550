/// Who sent a LocalSend request, as the TLS layer saw it: never the JSON's alias or fingerprint field.
///
/// Why both: the apps present a client certificate and are then known by its hash; a sender without one (localsend-cli,
/// localsend 0.1.2, old apps) can only be told apart by its address. Two requests come from the same peer when both
/// carry the same certificate hash, or when neither carries one and they come from the same address.
public struct LocalSendPeer: Hashable, Sendable, CustomStringConvertible {
    /// The sender's IP address as the socket reported it.
    public var address: String
    /// SHA-256 of the client certificate's DER, hex (any case; compared case-insensitively); nil without one.
    public var certificateFingerprint: String?

    public init(address: String, certificateFingerprint: String? = nil) {
        self.address = address
        self.certificateFingerprint = certificateFingerprint?.lowercased()
    }

    /// Whether `other` is the same sender (see the type's comment).
    public func isSame(as other: LocalSendPeer) -> Bool {
        switch (certificateFingerprint, other.certificateFingerprint) {
        case (let mine?, let theirs?): return mine == theirs
        case (nil, nil): return address == other.address
        default: return false
        }
    }

    public var description: String { certificateFingerprint.map { "certificate \($0.prefix(16))…" } ?? address }
}

/// One file of a `prepare-upload` request, reduced to what the session needs.
public struct LocalSendFileOffer: Equatable, Sendable {
    /// The sender's file ID (the key of the request's `files` object).
    public var id: String
    /// The announced size in bytes.
    public var size: UInt64

    public init(id: String, size: UInt64) {
        self.id = id
        self.size = size
    }
}

/// A random secret of 128 bits: a session ID or an upload token, written as 32 lower-case hex digits.
///
/// Why 128 bits: a token is all that authorises an upload of a file besides the peer check; 2^128 cannot be guessed
/// within a session's lifetime, and the bytes come from a generator the driver injects (the system's CSPRNG in
/// ferry, a seeded one in tests).
public struct LocalSendSecret: Hashable, Sendable, CustomStringConvertible {
    public let bytes: [UInt8]

    public init(bytes: [UInt8]) {
        precondition(bytes.count >= 16, "a LocalSend secret has at least 128 bits")
        self.bytes = bytes
    }

    /// 16 bytes from `generator`.
    public static func random(using generator: inout some RandomNumberGenerator) -> LocalSendSecret {
        var bytes: [UInt8] = []
        bytes.reserveCapacity(16)
        for _ in 0..<2 {
            let word = generator.next()
            for shift in stride(from: 0, to: 64, by: 8) {
                bytes.append(UInt8(truncatingIfNeeded: word >> UInt64(shift)))
            }
        }
        return LocalSendSecret(bytes: bytes)
    }

    /// Parses hex text (either case); nil for anything else or fewer than 32 digits.
    public init?(hex text: String) {
        let digits = Array(text.utf8)
        guard digits.count >= 32, digits.count % 2 == 0, digits.count <= 128 else { return nil }
        var bytes: [UInt8] = []
        bytes.reserveCapacity(digits.count / 2)
        var index = 0
        while index < digits.count {
            guard let high = Self.nibble(digits[index]), let low = Self.nibble(digits[index + 1]) else { return nil }
            bytes.append(high << 4 | low)
            index += 2
        }
        self.bytes = bytes
    }

    /// Compares in time independent of where the first difference is.
    public func matches(_ other: LocalSendSecret) -> Bool {
        guard bytes.count == other.bytes.count else { return false }
        var difference: UInt8 = 0
        for index in bytes.indices { difference |= bytes[index] ^ other.bytes[index] }
        return difference == 0
    }

    public var description: String {
        let digits = Array("0123456789abcdef".utf8)
        var text: [UInt8] = []
        for byte in bytes {
            text.append(digits[Int(byte >> 4)])
            text.append(digits[Int(byte & 0x0F)])
        }
        return String(decoding: text, as: UTF8.self)
    }

    private static func nibble(_ digit: UInt8) -> UInt8? {
        switch digit {
        case UInt8(ascii: "0")...UInt8(ascii: "9"): return digit - UInt8(ascii: "0")
        case UInt8(ascii: "a")...UInt8(ascii: "f"): return digit - UInt8(ascii: "a") + 10
        case UInt8(ascii: "A")...UInt8(ascii: "F"): return digit - UInt8(ascii: "A") + 10
        default: return nil
        }
    }
}

/// An HTTP status the LocalSend server answers with: an open set, so a driver can carry any code.
public struct LocalSendStatus: RawRepresentable, Hashable, Sendable, CustomStringConvertible {
    public let rawValue: Int
    public init(rawValue: Int) { self.rawValue = rawValue }

    /// Accepted (tokens follow), uploaded, cancelled.
    public static let ok = LocalSendStatus(rawValue: 200)
    /// Consent given to no file: nothing to transfer (the apps' answer to a message).
    public static let noContent = LocalSendStatus(rawValue: 204)
    /// Missing parameters, no files, too many files, a file ID twice.
    public static let badRequest = LocalSendStatus(rawValue: 400)
    /// PIN missing or wrong.
    public static let unauthorized = LocalSendStatus(rawValue: 401)
    /// Declined, or a request that is not this session's peer, session ID or token.
    public static let forbidden = LocalSendStatus(rawValue: 403)
    /// Another session is active, no upload is allowed yet, or the file was uploaded already.
    public static let conflict = LocalSendStatus(rawValue: 409)
    /// Too many wrong PINs.
    public static let tooManyRequests = LocalSendStatus(rawValue: 429)

    public var description: String { String(rawValue) }
}

/// How one file of a session ended.
public enum LocalSendFileOutcome: Equatable, Sendable {
    case received
    case failed
    case declined
}
