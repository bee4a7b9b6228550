import FerrySession

/// Swarm links (PROTOCOL.md 11.11, `PeerInfo.isSwarmLink`) are plumbing: the transfer engine opens them between the
/// recipients of one broadcast, and the session admits them without a prompt because the sender vouched for them.
/// No person connected such a peer, so nothing a person reads lists, greets or prompts for it, and no command picks
/// it as a target; what the links carried shows in the transfer's summary instead.
extension PeerInfo {
    /// Whether the peer is here only by its swarm link right now (connected by one).
    var isConnectedBySwarmLink: Bool {
        isSwarmLink && state == .connected
    }

    /// Whether a change to `state` reports a swarm link coming up or going down (not shown). The peer's discovery
    /// changes (`available`, `unavailable`) are ordinary news, whatever its last link was.
    func isSwarmLinkChange(to state: PeerState) -> Bool {
        isSwarmLink && (state == .connected || state == .disconnected)
    }
}
