import FerryWire

extension Session {
    /// Bytes sent to `peerID`'s link that its end has not acknowledged yet: in the socket's send buffer or on the way,
    /// not in the link writer's queue (nil when the peer is not connected or the transport cannot tell).
    ///
    /// The transfer engine's pace: a sender waiting for its window while this is about zero waits for the receiving
    /// process, not for the link (the bytes in flight have all crossed it).
    public func unacknowledgedBytes(to peerID: PeerID) -> Int? {
        guard let id = peers[peerID]?.connectedLink, let link = links[id] else { return nil }
        return link.writer.unacknowledgedBytes
    }

    /// Seconds the link to `peerID` has been limited by the peer's receive window since it opened (nil when the peer
    /// is not connected or the transport cannot tell): over an interval, the share of it the receiving process did
    /// not keep up, its socket buffer full, whatever the bytes left unacknowledged.
    public func receiveWindowLimitedSeconds(to peerID: PeerID) -> Double? {
        guard let id = peers[peerID]?.connectedLink, let link = links[id] else { return nil }
        return link.writer.receiveWindowLimitedSeconds
    }
}
