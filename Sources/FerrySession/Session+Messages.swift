import FerryWire
import Foundation

/// Messages as `Data`, as GameKit's `sendData:toPeers:withDataMode:error:` took and delivered `NSData`.
///
/// A message is one `Data` from one peer to others, delivered whole on the receiver's `events` as
/// `SessionEvent.dataReceived(_:from:mode:)` with its sender. Reliable messages (`DataMode.reliable`) travel in a
/// frame of their own on the peer's TLS link: ordered, delivered or the link fails, at most
/// `maxReliableMessageSize` bytes. Unreliable ones (`DataMode.unreliable`) are one sealed UDP datagram each: never
/// queued, possibly lost or reordered (never replayed), at most `maxUnreliableMessageSize` bytes. A message over
/// its limit is refused with `SessionError.messageTooLarge` or `.datagramTooLarge` before anything is sent.
/// For larger data, `TransferEngine` sends it as a payload in chunks (FerryTransfer).
extension Session {
    /// The largest reliable message, in bytes (16 MiB; PROTOCOL.md, the message frame).
    public static let maxReliableMessageSize = Limits.maxMessageSize
    /// The largest unreliable message, in bytes (1200: its datagram fits a 1280-byte MTU over IPv4 unsplit).
    public static let maxUnreliableMessageSize = Limits.maxDatagramPayload

    /// GameKit's `sendData:toPeers:withDataMode:error:`: sends `data` to each of `peerIDs`.
    ///
    /// Reliable: every peer must be connected (checked before anything is sent); returns once the message is
    /// queued for each, waiting while a peer's queue is full. Unreliable: never blocks; a datagram the socket
    /// cannot take now is dropped, as UDP may.
    /// - Throws: `SessionError.messageTooLarge` (reliable, over `maxReliableMessageSize`) or `.datagramTooLarge`
    ///   (unreliable, over `maxUnreliableMessageSize`), `.unknownPeer`, `.notConnected`, `.sessionClosed`.
    public func send(_ data: Data, to peerIDs: [PeerID], mode: DataMode = .reliable) async throws {
        try Self.checkSize(data.count, mode: mode)
        try await send(Array(data), to: peerIDs, mode: mode)
    }

    /// GameKit's `sendDataToAllPeers:withDataMode:error:`: sends `data` to every connected peer (none is not an
    /// error). Throws as `send(_:to:mode:)`.
    public func sendToAll(_ data: Data, mode: DataMode = .reliable) async throws {
        try Self.checkSize(data.count, mode: mode)
        try await sendToAll(Array(data), mode: mode)
    }

    /// The limit of `mode`, checked before the bytes are copied.
    static func checkSize(_ size: Int, mode: DataMode) throws(SessionError) {
        switch mode {
        case .reliable where size > maxReliableMessageSize:
            throw .messageTooLarge(size: size, limit: maxReliableMessageSize)
        case .unreliable where size > maxUnreliableMessageSize:
            throw .datagramTooLarge(size: size, limit: maxUnreliableMessageSize)
        default:
            return
        }
    }
}
