import FerrySecurity
import FerryStateMachines
import FerrySystem
import FerryWire

/// Identifies one link of a session (a peer may have had several over time).
struct LinkID: Hashable, Sendable, Comparable, CustomStringConvertible {
    var rawValue: Int
    static func < (lhs: LinkID, rhs: LinkID) -> Bool { lhs.rawValue < rhs.rawValue }
    var description: String { "link#\(rawValue)" }
}

/// The session's bookkeeping for one peer: presence from discovery and connection state, apart.
struct PeerRecord: Sendable {
    enum Connection: Equatable, Sendable {
        case none
        case connecting(LinkID?)
        case connected(LinkID)
    }

    var peerID: PeerID
    var deviceID: DeviceID
    var displayName: String
    var mode: PeerMode
    var address: SocketAddress?
    var isDiscovered = false
    /// Reached through a manual address (`--peer`); such a peer does not expire with discovery.
    var isManual = false
    var isAcceptingConnections = false
    /// Whether its application reads messages (no `filesOnly` in its latest beacon or hello).
    var takesMessages = true
    var connection: Connection = .none
    /// Where its unreliable datagrams come from and go to, while connected.
    var datagramAddress: SocketAddress?
    /// An incoming request waiting for `accept` or `deny`.
    var pendingRequest: LinkID?
    /// The state last reported in an event, to report changes only.
    var reportedState: PeerState?
    /// The 6-digit code of its connected link, or while it has none of its latest link to agree one (see
    /// `PairingCode`, `LinkRecord.pairingCode`).
    var pairingCode: String?
    /// Whether its device ID is pinned.
    var isTrusted = false
    /// Whether its connected link (the last one, once it ended) is a swarm link.
    var isSwarmLink = false
    /// Keys, next sequence number and replay window of its datagrams, while connected.
    var datagrams: DatagramChannel?

    var state: PeerState {
        switch connection {
        case .connected: return .connected
        case .connecting: return .connecting
        case .none: return isDiscovered || isManual ? .available : .unavailable
        }
    }

    var info: PeerInfo {
        PeerInfo(
            peerID: peerID, deviceID: deviceID, displayName: displayName, mode: mode, address: address,
            isDiscovered: isDiscovered, isAcceptingConnections: isAcceptingConnections, state: state,
            pairingCode: pairingCode, isTrusted: isTrusted, takesMessages: takesMessages,
            isSwarmLink: isSwarmLink)
    }

    var connectedLink: LinkID? {
        if case .connected(let id) = connection { return id }
        return nil
    }
}

/// One connected peer's datagram keys: sealing ours, opening theirs, and the numbers already taken.
struct DatagramChannel: Sendable {
    let send: DatagramCipher
    let receive: DatagramCipher
    /// The sequence number of our next datagram to this peer (the AEAD nonce: never repeated on a link).
    var nextSequence: UInt64 = 1
    var window = ReplayWindow()
}
