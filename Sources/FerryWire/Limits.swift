/// The size limits of the wire format, in bytes.
///
/// They are part of the protocol (docs/PROTOCOL.md section "Limits"): every length read from a peer is
/// checked against one of these before anything is allocated, so a peer cannot make us buffer more.
public enum Limits {
    /// Frame payload limit until the connection is accepted, the hello included (pre-authentication cap).
    public static let maxHelloPayload = 1024
    /// Frame payload limit once the connection is accepted: the largest message plus room for a transfer header.
    public static let maxFramePayload = 16 * 1024 * 1024 + 1024
    /// Largest application message sent reliably.
    public static let maxMessageSize = 16 * 1024 * 1024
    /// Session ID length in UTF-8 bytes (at least 1).
    public static let maxSessionIDLength = 64
    /// Display name length in UTF-8 bytes (at least 1).
    public static let maxDisplayNameLength = 64
    /// Deny/goodbye detail length in UTF-8 bytes (may be 0).
    public static let maxDetailLength = 255
    /// Datagram payload limit: header, payload and tag (1240 bytes) fit a 1280-byte MTU over IPv4 (1268 with the IP
    /// and UDP headers); over IPv6 they would be 8 bytes past its 1280-byte minimum MTU (PROTOCOL.md section 2).
    public static let maxDatagramPayload = 1200
    /// Whole discovery beacon limit.
    public static let maxBeaconLength = 512

    // Transfer protocol (docs/PROTOCOL.md section 11).

    /// Offered file path length in UTF-8 bytes (at least 1).
    public static let maxTransferPathLength = 4096
    /// Smallest chunk size an offer may announce (64 KiB).
    public static let minChunkSize = 65_536
    /// Largest chunk size an offer may announce (4 MiB); also the largest `rawLength` of a chunk.
    public static let maxChunkSize = 4_194_304
    /// Chunk size ferry 1.0 offers (1 MiB).
    public static let defaultChunkSize = 1_048_576
    /// Files in one offer (at least 1).
    public static let maxOfferFiles = 10_000
    /// Most folders in an offer's folders section (PROTOCOL.md 11.3): as many as files.
    public static let maxOfferFolders = 10_000
    /// Media type length in bytes (may be 0 = unknown).
    public static let maxMediaTypeLength = 127
}

extension Limits {
    /// `text` cut, at a character boundary, to the `maxDetailLength` UTF-8 bytes a deny, goodbye or transfer detail
    /// field holds: for texts built from error descriptions or file names, whose length the caller does not control.
    public static func clippedDetail(_ text: String) -> String {
        var result = ""
        var length = 0
        for character in text {
            let size = character.utf8.count
            guard length + size <= maxDetailLength else { break }
            result.append(character)
            length += size
        }
        return result
    }
}

extension Limits {
    // Swarm broadcast (docs/PROTOCOL.md 11.11).

    /// Fewest members a swarm section lists (a swarm of one is a plain transfer).
    public static let minSwarmMembers = 2
    /// Most members a swarm section lists, and most indices in a `swarmMembers` frame.
    public static let maxSwarmMembers = 256
    /// A swarm member's address ("ip:port", "[v6%if]:port"), printable ASCII bytes (may be 0 = unknown).
    public static let maxSwarmAddressLength = 64
    /// Digests in one `chunkDigests` frame, and chunk ranges in one `swarmHave` frame (at least 1).
    public static let maxSwarmEntriesPerFrame = 1024
    /// Requests a member may have outstanding with one other member (K); one more is refused `busy`.
    public static let maxSwarmRequestsInFlight = 4
}
