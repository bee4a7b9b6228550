import Glibc
import FerrySecurity
import FerrySystem
import FerryWire
import Foundation

extension Session {
    /// Binds the datagram socket to the UDP port with the number of the TCP listen port (so one number, TCP and
    /// UDP, is what a firewall lets through), or to any free port when that one is taken or there is no listener.
    func openDatagramSocket() throws {
        let socket: UDPSocket
        do {
            socket = try reactor.openUDP(bindingTo: .ipv4(.any, port: listenPort))
        } catch let error as SystemError where error.errno.rawValue == EADDRINUSE && listenPort != 0 {
            socket = try reactor.openUDP(bindingTo: .ipv4(.any, port: 0))
        }
        datagramSocket = socket
        datagramPort = socket.localAddress.port
    }

    /// Seals and sends one datagram to each peer with that peer's link keys; never blocks (a full socket buffer
    /// drops it, as UDP may).
    func sendDatagram(_ data: [UInt8], to peerIDs: [PeerID]) throws {
        guard data.count <= Limits.maxDatagramPayload else {
            throw SessionError.datagramTooLarge(size: data.count, limit: Limits.maxDatagramPayload)
        }
        guard let socket = datagramSocket else { throw SessionError.sessionClosed }
        for peerID in peerIDs {
            guard var peer = peers[peerID], let address = peer.datagramAddress, var channel = peer.datagrams else {
                continue
            }
            let sequence = channel.nextSequence
            channel.nextSequence += 1
            peer.datagrams = channel
            peers[peerID] = peer
            let header = Datagram.header(sessionTag: sessionTag, sender: localPeerID, sequence: sequence)
            guard let sealed = channel.send.seal(data, header: header, sequence: sequence) else {
                statistics.datagramsDropped += 1
                continue
            }
            if (try? socket.send(header + sealed, to: address)) != true { statistics.datagramsDropped += 1 }
        }
    }

    /// A datagram arrived: taken only from a connected peer of this session, at that peer's address, when it opens
    /// with that peer's link key and its sequence number was not seen before.
    func datagramArrived(_ bytes: [UInt8], from address: SocketAddress) {
        guard !isClosed, let datagram = try? Datagram(decoding: bytes[...]), datagram.sessionTag == sessionTag,
            var peer = peers[datagram.sender], peer.connectedLink != nil, var channel = peer.datagrams,
            peer.datagramAddress?.hostDescription == address.hostDescription
        else {
            statistics.datagramsDropped += 1
            return
        }
        guard channel.window.isFresh(datagram.sequence) else {
            statistics.datagramsReplayed += 1
            return
        }
        guard
            let payload = channel.receive.open(
                datagram.sealed[...], header: bytes[..<Datagram.headerLength], sequence: datagram.sequence)
        else {
            statistics.datagramsForged += 1
            return
        }
        channel.window.record(datagram.sequence)
        peer.datagrams = channel
        peers[datagram.sender] = peer
        emit(.dataReceived(Data(payload), from: peer.info, mode: .unreliable))
    }
}
