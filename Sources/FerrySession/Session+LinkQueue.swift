import FerryWire

extension Session {
    /// Bytes sent to `peerID`'s link that its end has not acknowledged yet: in the link's queue, the socket's send
    /// buffer, or on the way (nil when the peer is not connected or the transport cannot tell).
    ///
    /// The transfer engine's pace: a sender waiting for its window while this is about zero waits for the receiving
    /// process, not for the link (the bytes in flight have all crossed it).
    public func unacknowledgedBytes(to peerID: PeerID) -> Int? {
        guard let id = peers[peerID]?.connectedLink, let link = links[id] else { return nil }
        return link.writer.unacknowledgedBytes
    }
}
