import FerryWire
import Foundation

/// A peer whose device ID this install has pinned: links from it need no question, and a peer that shows another
/// key under its name is refused.
///
/// One line of the trusted-peers file, as JSON with sorted keys:
///
///     {"added":"2026-11-30T06:31:43Z","deviceID":"<64 lowercase hex digits>","name":"alice-laptop"}
///     {"added":"2026-12-07T23:10:02Z","alias":"Nice Orange","deviceID":"<64 lowercase hex digits>","kind":"localsend","name":"Nice Orange"}
///
/// The ID is stored in hex (exact, what tools compare) and shown grouped base32 (what people compare); `added`
/// is ISO 8601 in UTC, whole seconds. `name` is what the user or the pairing prompt called the peer, possibly
/// empty; it is text a peer may have chosen, so escape it (`TerminalText`) before printing.
///
/// A LocalSend device (pinned from the `--accept ask` prompt's `always`, or `ferry trust add --localsend`) has
/// `"kind":"localsend"` and the `alias` it announced when it was pinned; its device ID is its LocalSend
/// fingerprint (the SHA-256 of its certificate, which the app shows as these 64 hex digits in upper case). Both
/// keys are left out for a ferry peer, so files written before them read the same, and ferry versions before them
/// read such a line as a ferry peer with the same device ID (which is what it is to them: the same hash, trusted).
/// They also rewrite the whole file on any `trust add` or `trust remove`, without the keys they do not know: the
/// device stays trusted by the same hash, as a ferry peer (`trust add --localsend` makes it a LocalSend device again).
public struct TrustedPeer: Codable, Equatable, Sendable {
    /// What kind of device a pinned ID belongs to: the protocol it was met through.
    public enum Kind: String, Codable, Sendable {
        /// A ferry install (its device ID is the hash of its Ed25519 certificate).
        case ferry
        /// A LocalSend app or peer (its device ID is its LocalSend fingerprint, the hash of its certificate).
        case localsend
    }

    /// The pinned device ID; stored as 64 hex digits.
    public var deviceID: DeviceID
    /// The name the peer is known by here, possibly empty; peer-chosen text, so escape it before printing.
    public var name: String
    /// When the peer was pinned (stored in UTC, whole seconds).
    public var added: Date
    /// The protocol the device was met through; `.ferry` when the line has no `kind`.
    public var kind: Kind
    /// A LocalSend device's alias as it announced it when pinned (peer-chosen text: escape it); nil for ferry peers.
    public var alias: String?

    /// Creates an entry; `name` may be empty for a peer pinned without one.
    public init(deviceID: DeviceID, name: String, added: Date, kind: Kind = .ferry, alias: String? = nil) {
        self.deviceID = deviceID
        self.name = name
        self.added = added
        self.kind = kind
        self.alias = alias
    }

    /// The LocalSend fingerprint as the apps show it (64 upper-case hex digits); nil for a ferry peer.
    public var localSendFingerprint: String? {
        kind == .localsend ? deviceID.hex.uppercased() : nil
    }

    private enum CodingKeys: String, CodingKey {
        case deviceID
        case name
        case added
        case kind
        case alias
    }

    /// Reads one line of the trusted-peers file; throws `DecodingError.dataCorrupted` for an ID that is not 64 hex
    /// digits or a date that is not ISO 8601.
    public init(from decoder: any Decoder) throws {
        let container = try decoder.container(keyedBy: CodingKeys.self)
        let hex = try container.decode(String.self, forKey: .deviceID)
        guard hex.utf8.count == DeviceID.length * 2, let id = DeviceID(string: hex) else {
            throw DecodingError.dataCorruptedError(
                forKey: .deviceID, in: container, debugDescription: "not 64 hex digits")
        }
        let addedText = try container.decode(String.self, forKey: .added)
        guard let added = try? Date(addedText, strategy: .iso8601) else {
            throw DecodingError.dataCorruptedError(
                forKey: .added, in: container, debugDescription: "not an ISO 8601 date")
        }
        // A `kind` this version does not know (a later one's) is refused as damage rather than read as a ferry peer.
        let kind = try container.decodeIfPresent(Kind.self, forKey: .kind) ?? .ferry
        self.init(
            deviceID: id, name: try container.decode(String.self, forKey: .name), added: added, kind: kind,
            alias: try container.decodeIfPresent(String.self, forKey: .alias))
    }

    /// Writes the entry as the trusted-peers file stores it: the ID in hex, `added` in ISO 8601.
    public func encode(to encoder: any Encoder) throws {
        var container = encoder.container(keyedBy: CodingKeys.self)
        try container.encode(deviceID.hex, forKey: .deviceID)
        try container.encode(name, forKey: .name)
        try container.encode(added.formatted(.iso8601), forKey: .added)
        if kind != .ferry {
            try container.encode(kind, forKey: .kind)
        }
        try container.encodeIfPresent(alias, forKey: .alias)
    }

    /// `date` without its fraction of a second, so that an entry reads back equal to what was written.
    static func wholeSeconds(_ date: Date) -> Date {
        Date(timeIntervalSince1970: date.timeIntervalSince1970.rounded(.down))
    }
}
