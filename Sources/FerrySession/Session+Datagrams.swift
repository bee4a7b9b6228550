import FerrySystem
import FerryWire

extension Session {
    func openDatagramSocket() throws {
        let socket = try reactor.openUDP(bindingTo: .ipv4(.any, port: 0))
        datagramSocket = socket
        datagramPort = socket.localAddress.port
    }

    /// Sends one datagram to each peer; never blocks (a full socket buffer drops it, as UDP may).
    func sendDatagram(_ data: [UInt8], to peerIDs: [PeerID]) throws {
        guard data.count <= Limits.maxDatagramPayload else {
            throw SessionError.datagramTooLarge(size: data.count, limit: Limits.maxDatagramPayload)
        }
        guard let socket = datagramSocket else { throw SessionError.sessionClosed }
        datagramSequence &+= 1
        let datagram = Datagram(sessionTag: sessionTag, sender: localPeerID, sequence: datagramSequence, payload: data)
        let bytes = try datagram.encoded()
        for peerID in peerIDs {
            guard let address = peers[peerID]?.datagramAddress else { continue }
            if (try? socket.send(bytes, to: address)) != true { statistics.datagramsDropped += 1 }
        }
    }

    /// A datagram arrived: accepted only from a connected peer of this session, from that peer's address.
    func datagramArrived(_ bytes: [UInt8], from address: SocketAddress) {
        guard !isClosed, let datagram = try? Datagram(decoding: bytes[...]), datagram.sessionTag == sessionTag,
            let peer = peers[datagram.sender], peer.connectedLink != nil,
            peer.datagramAddress?.hostDescription == address.hostDescription
        else {
            statistics.datagramsDropped += 1
            return
        }
        emit(.dataReceived(datagram.payload, from: peer.info, mode: .unreliable))
    }
}
