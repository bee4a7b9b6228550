import FerryWire
import Foundation

/// A peer whose device ID this install has pinned: links from it need no question, and a peer that shows another
/// key under its name is refused.
///
/// One line of the trusted-peers file, as JSON with sorted keys:
///
///     {"added":"2026-11-30T06:31:43Z","deviceID":"<64 lowercase hex digits>","name":"alice-laptop"}
///
/// The ID is stored in hex (exact, what tools compare) and shown grouped base32 (what people compare); `added`
/// is ISO 8601 in UTC, whole seconds. `name` is what the user or the pairing prompt called the peer, possibly
/// empty; it is text a peer may have chosen, so escape it (`TerminalText`) before printing.
public struct TrustedPeer: Codable, Equatable, Sendable {
    /// The pinned device ID; stored as 64 hex digits.
    public var deviceID: DeviceID
    /// The name the peer is known by here, possibly empty; peer-chosen text, so escape it before printing.
    public var name: String
    /// When the peer was pinned (stored in UTC, whole seconds).
    public var added: Date

    /// Creates an entry; `name` may be empty for a peer pinned without one.
    public init(deviceID: DeviceID, name: String, added: Date) {
        self.deviceID = deviceID
        self.name = name
        self.added = added
    }

    private enum CodingKeys: String, CodingKey {
        case deviceID
        case name
        case added
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
        self.init(deviceID: id, name: try container.decode(String.self, forKey: .name), added: added)
    }

    /// Writes the entry as the trusted-peers file stores it: the ID in hex, `added` in ISO 8601.
    public func encode(to encoder: any Encoder) throws {
        var container = encoder.container(keyedBy: CodingKeys.self)
        try container.encode(deviceID.hex, forKey: .deviceID)
        try container.encode(name, forKey: .name)
        try container.encode(added.formatted(.iso8601), forKey: .added)
    }

    /// `date` without its fraction of a second, so that an entry reads back equal to what was written.
    static func wholeSeconds(_ date: Date) -> Date {
        Date(timeIntervalSince1970: date.timeIntervalSince1970.rounded(.down))
    }
}
