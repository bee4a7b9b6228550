import Foundation
import FerrySession
import FerrySystem
import FerryWire

/// A peer named on the command line with `--to`: by name or ID, or by address.
///
/// People name peers the way `ferry peers` shows them: a display name, the start of a device ID
/// (`ABCD-EFGH`), or the start of a peer ID (hex). A target that parses as an IP address and port is an address
/// to connect to directly; host names are deliberately not looked up (a DNS answer would decide where files go),
/// so `laptop.local:41971` is refused with a message saying so.
public enum PeerTarget: Sendable, Hashable, CustomStringConvertible {
    /// A display name, or a device ID or peer ID prefix, matched against the peers of the session.
    case name(String)
    /// An IP literal and port, as typed, and the address it parses to.
    case address(String, SocketAddress)

    /// The fewest characters a device ID or peer ID prefix must have, so that a short word never picks a peer
    /// by accident.
    public static let minimumPrefixLength = 4

    /// Parses a `--to` value. Throws a usage error for an empty value or a host name with a port.
    public static func parse(_ text: String, option: String = "to") throws(CLIError) -> PeerTarget {
        guard !text.isEmpty else {
            throw .usage("--\(option): the peer name must not be empty")
        }
        guard let (host, _) = GlobalOptions.splitHostPort(text) else {
            // An IP address with a port that is not one (0, 99999, 80x) is a typo, not a display name.
            if let colon = text.lastIndex(of: ":") {
                let host = String(text[..<colon]).trimmingCharacters(in: CharacterSet(charactersIn: "[]"))
                if IPv4Address(host) != nil || IPv6Address(host) != nil {
                    let example = host.contains(":") ? "[\(host)]" : host
                    throw .usage(
                        "--\(option): '\(TerminalText.excerpt(text))' has no valid port; give a port from 1 to 65535 "
                            + "(e.g. \(example):\(GlobalOptions.defaultPort))")
                }
            }
            return .name(text)
        }
        let bareHost = host.split(separator: "%", maxSplits: 1).first.map(String.init) ?? host
        if IPv4Address(host) != nil || IPv6Address(bareHost) != nil {
            do {
                return .address(text, try SocketAddress.resolve(text))
            } catch {
                throw .usage("--\(option): '\(TerminalText.excerpt(text))' is not a usable address: \(error)")
            }
        }
        if looksLikeHostName(host) {
            throw .usage(
                "--\(option): '\(TerminalText.excerpt(text))' names a host; ferry does not look up host names. "
                    + "Give the peer's IP address and port (e.g. 192.168.1.20:\(GlobalOptions.defaultPort)) "
                    + "or its display name")
        }
        return .name(text)
    }

    /// Whether `host` is made of the characters of DNS names (letters, digits, `-`, `.`).
    static func looksLikeHostName(_ host: String) -> Bool {
        host.unicodeScalars.allSatisfy { scalar in
            scalar.isASCII
                && (("a"..."z").contains(scalar) || ("A"..."Z").contains(scalar) || ("0"..."9").contains(scalar)
                    || scalar == "-" || scalar == ".")
        }
    }

    /// The target as typed.
    public var text: String {
        switch self {
        case .name(let text), .address(let text, _):
            text
        }
    }

    /// The target as typed, escaped for a terminal (and cut when it is very long).
    public var description: String {
        TerminalText.excerpt(text)
    }

    /// Which of `candidates` this target names, the pinned peers (`pinned`: device ID and the name it was pinned
    /// under) taken into account.
    ///
    /// A display name is chosen by whoever runs a peer: anyone on the network can call itself "alice". So a name
    /// that several peers answer to names the one pinned device among them (`.pinned`, with the others, which
    /// the command warns about) rather than being ambiguous; and a name pinned to a device that is not among the
    /// candidates names nobody, though another device answers to it (`.pinnedAbsent`): files are never sent to a
    /// stranger for the name of a pinned peer. A name pinned here names that device whatever it calls itself now,
    /// and no other peer takes it through a device ID or peer ID prefix that happens to spell it (a peer chooses its
    /// peer ID, and can grind a key whose ID starts with a short name). Any other device ID or peer ID prefix picks
    /// that device.
    public func match(in candidates: [PeerCandidate], pinned: [DeviceID: String]) -> TargetMatch {
        let plain = match(in: candidates)
        guard case .name(let text) = self else { return plain }
        // A name pinned here means that device and nothing else, whatever it calls itself now: no other peer takes
        // it by its display name nor by an ID prefix it chose or ground to look like the name.
        let owners = pinned.filter { DisplayNameMatch.same($0.value, text) }
        if owners.count == 1, let owner = owners.first?.key {
            let rules = rules(for: text)
            let answering = candidates.filter { candidate in
                candidate.deviceID != owner && rules.contains { rule in rule(candidate) }
            }
            let devices = candidates.filter { $0.deviceID == owner }
            if devices.count > 1 { return .ambiguous(devices) }  // a beacon copying the pinned ID: as before
            if let device = devices.first {
                return answering.isEmpty ? .one(device) : .pinned(device, others: answering)
            }
            return answering.isEmpty ? .none : .pinnedAbsent(owner, others: answering)
        }
        let byName: [PeerCandidate]
        switch plain {
        case .none:
            return plain
        case .one(let only):
            guard DisplayNameMatch.same(only.displayName, text) else { return plain }
            byName = [only]
        case .ambiguous(let matches):
            byName = matches.filter { DisplayNameMatch.same($0.displayName, text) }
            guard byName.count == matches.count else { return plain }
        case .pinned, .pinnedAbsent:
            return plain
        }
        // A name pinned to no device that several peers answer to: the one of them pinned under another name.
        let trusted = byName.filter { pinned[$0.deviceID] != nil }
        if trusted.count == 1, let device = trusted.first {
            let others = byName.filter { $0.peerID != device.peerID }
            return others.isEmpty ? .one(device) : .pinned(device, others: others)
        }
        return plain
    }

    /// The rules a name target matches a candidate by, in order (`match(in:)`).
    private func rules(for text: String) -> [(PeerCandidate) -> Bool] {
        let lowered = text.lowercased()
        let prefixUsable = text.unicodeScalars.filter { $0 != "-" && $0 != " " }.count >= Self.minimumPrefixLength
        return [
            { $0.displayName == text },
            { $0.displayName.lowercased() == lowered },
            { candidate in
                prefixUsable
                    && (candidate.deviceID.hasPrefix(text) || candidate.peerID.description.hasPrefix(lowered))
            },
        ]
    }

    /// Which of `candidates` this target names, by name or ID alone.
    ///
    /// In order, the first rule that matches anything decides: the exact display name; the display name ignoring
    /// case; a device ID or peer ID prefix of at least `minimumPrefixLength` characters. More than one match under
    /// the deciding rule is ambiguous. An address target matches the peer at that address.
    public func match(in candidates: [PeerCandidate]) -> TargetMatch {
        let rules: [(PeerCandidate) -> Bool]
        switch self {
        case .address(_, let address):
            rules = [{ $0.address == address }]
        case .name(let text):
            rules = self.rules(for: text)
        }
        for rule in rules {
            let matches = candidates.filter(rule)
            if matches.count == 1, let only = matches.first {
                return .one(only)
            }
            if matches.count > 1 {
                return .ambiguous(matches)
            }
        }
        return .none
    }
}

/// What `PeerTarget.match(in:)` needs to know of a peer (a value tests can build, unlike `PeerInfo`).
public struct PeerCandidate: Sendable, Hashable {
    /// The session's ID for the peer; a name target matches a prefix of its hex form.
    public var peerID: PeerID
    /// The install's device ID; a name target of `PeerTarget.minimumPrefixLength` characters or more matches a prefix.
    public var deviceID: DeviceID
    /// The name the peer announces; a name target matches it exactly, then ignoring case.
    public var displayName: String
    /// Where the peer can be reached, matched by an address target; nil when unknown.
    public var address: SocketAddress?

    /// A candidate from its identity; `address` may be left out when only names and IDs are matched.
    public init(peerID: PeerID, deviceID: DeviceID, displayName: String, address: SocketAddress? = nil) {
        self.peerID = peerID
        self.deviceID = deviceID
        self.displayName = displayName
        self.address = address
    }

    /// How error messages list it: `alice (ABCD-EFGH, peer 0123456789abcdef)`, escaped.
    public var listing: String {
        "\(TerminalText.escape(displayName)) (\(deviceID.shortDescription), peer \(peerID))"
    }

    /// How a warning about another device using a name lists it: `alice (ABCD-EFGH at 192.168.1.7:41971)`, escaped.
    public var whereabouts: String {
        let place = address.map { " at \($0)" } ?? ""
        return "\(TerminalText.escape(displayName)) (\(deviceID.shortDescription)\(place))"
    }
}

/// The result of matching a target against the peers of the session.
public enum TargetMatch: Sendable, Equatable {
    case none
    case one(PeerCandidate)
    case ambiguous([PeerCandidate])
    /// The name names the one pinned device among several that answer to it; `others` are not pinned.
    case pinned(PeerCandidate, others: [PeerCandidate])
    /// The name is pinned to `DeviceID`, which is not here; `others` (unpinned) answer to it.
    case pinnedAbsent(DeviceID, others: [PeerCandidate])
}

extension TargetMatch {
    /// What a person reads about a pinned name: the warning that another device uses it (`.pinned`), or why no one
    /// was chosen (`.pinnedAbsent`); nil for the other cases.
    public func pinnedNameText(_ name: String) -> String? {
        let quoted = "'\(TerminalText.excerpt(name))'"
        switch self {
        case .pinned(let device, let others):
            let noun = others.count == 1 ? "another device also calls itself" : "other devices also call themselves"
            return "warning: \(noun) \(quoted): " + others.map(\.whereabouts).joined(separator: ", ")
                + "; sending to the one you trusted, \(device.deviceID.shortDescription)"
        case .pinnedAbsent(let owner, let others):
            return "\(quoted) is pinned to device \(owner.shortDescription), which is not here; "
                + (others.count == 1 ? "another device calls itself that: " : "other devices call themselves that: ")
                + others.map(\.whereabouts).joined(separator: ", ") + " (not trusted, so nothing is sent to it)"
        case .none, .one, .ambiguous:
            return nil
        }
    }
}
