import FerryWire

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

    /// A peer at `address`, with its certificate's hash if it presented one (stored lower-case).
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

    /// `certificate ` and the hash's first 16 hex digits when there is one, else the address (for logs).
    public var description: String { certificateFingerprint.map { "certificate \($0.prefix(16))…" } ?? address }
}

/// One file of a `prepare-upload` request, reduced to what the session needs.
public struct LocalSendFileOffer: Equatable, Sendable {
    /// The sender's file ID (the key of the request's `files` object).
    public var id: String
    /// The announced size in bytes.
    public var size: UInt64

    /// An offer of file `id` of `size` bytes.
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
    /// The secret's bytes, at least 16 (128 bits): 16 from `random`, 16...64 from `init(hex:)`.
    public let bytes: [UInt8]

    /// A secret of `bytes`; traps on fewer than 16 bytes.
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
        guard (32...128).contains(text.utf8.count), let bytes = Hex.bytes(text.utf8) else { return nil }
        self.bytes = bytes
    }

    /// Compares in time independent of where the first difference is.
    public func matches(_ other: LocalSendSecret) -> Bool {
        guard bytes.count == other.bytes.count else { return false }
        var difference: UInt8 = 0
        for index in bytes.indices { difference |= bytes[index] ^ other.bytes[index] }
        return difference == 0
    }

    /// The bytes as lower-case hex (32 digits for 16 bytes), as sent on the wire.
    public var description: String {
        Hex.string(bytes)
    }

}

/// An HTTP status the LocalSend server answers with: an open set, so a driver can carry any code.
public struct LocalSendStatus: RawRepresentable, Hashable, Sendable, CustomStringConvertible {
    /// The status code, e.g. 409.
    public let rawValue: Int
    /// A status with code `rawValue`.
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

    /// The code as decimal digits, e.g. `409`.
    public var description: String { String(rawValue) }
}

/// How one file of a session ended.
public enum LocalSendFileOutcome: Equatable, Sendable {
    case received
    case failed
    case declined
}
