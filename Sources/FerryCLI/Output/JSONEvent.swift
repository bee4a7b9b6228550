/// The `event` values of one command's `--json` output, each a case whose raw value is what is printed.
///
/// Every JSON line ferry prints starts with `"event"`, and the only way to write that key is `JSONLine(event:)`
/// with one of these cases, so that this file lists every event the code can print. docs/EVENTS.md documents each
/// of them under the heading of its `command`; `JSONEventTests` holds the two lists equal, both ways.
public protocol JSONEvent: RawRepresentable<String>, CaseIterable, Sendable {
    /// The command line whose output has these events, as docs/EVENTS.md heads its section (`ferry chat --json`).
    static var command: String { get }
}

/// Every command's events: the registry the documentation is checked against.
public enum JSONEvents {
    /// Each command with the events it prints, in the order docs/EVENTS.md documents them.
    public static let all: [(command: String, events: [String])] = [
        names(Chat.self), names(Peers.self), names(Transfers.self), names(Id.self), names(TrustList.self),
        names(Hash.self),
    ]

    static func names<E: JSONEvent>(_ type: E.Type) -> (command: String, events: [String]) {
        (E.command, E.allCases.map(\.rawValue))
    }

    /// `ferry chat --json`.
    public enum Chat: String, JSONEvent {
        /// The heading of the section in docs/EVENTS.md.
        public static let command = "ferry chat --json"
        case ready, available, unavailable, connecting, connected, disconnected, message, sent, peerInfo, notice, error
        case question, answer
    }

    /// `ferry peers --json`.
    public enum Peers: String, JSONEvent {
        /// The heading of the section in docs/EVENTS.md.
        public static let command = "ferry peers --json"
        case peer, localsend, error
    }

    /// `ferry send --json`, `ferry receive --json` and `ferry watch --json`: one engine, one set of events.
    public enum Transfers: String, JSONEvent {
        /// The heading of the section in docs/EVENTS.md, shared by the three commands.
        public static let command = "ferry send|receive|watch --json"
        case listening, watching, queued, connected, refused, trusted, offer, started, denied, progress, file, finished
        case message, summary, skipped, stagedRemoved, error, relayerCutOff, swarmEnded, stopping
    }

    /// `ferry id --json`.
    public enum Id: String, JSONEvent {
        /// The heading of the section in docs/EVENTS.md.
        public static let command = "ferry id --json"
        case identity
    }

    /// `ferry trust list --json`.
    public enum TrustList: String, JSONEvent {
        /// The heading of the section in docs/EVENTS.md.
        public static let command = "ferry trust list --json"
        case trustedPeer
    }

    /// `ferry hash --json`.
    public enum Hash: String, JSONEvent {
        /// The heading of the section in docs/EVENTS.md.
        public static let command = "ferry hash --json"
        case hash, skipped, folder
    }
}
