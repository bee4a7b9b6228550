import FerrySession
import FerryStateMachines
import FerrySystem
import FerryWire

/// Helpers of the sending side shared by the ordinary pump and the swarm's: codecs, and a pump's wait for news.
extension TransferEngine {
    static var localCodecs: CodecSet { [.zlib, .zstd, .zstdPrefixed] }

    /// Whether `address` is on this machine's loopback: 127.0.0.0/8, ::1, or ::ffff:127.x.y.z.
    static func isLoopback(_ address: SocketAddress?) -> Bool {
        switch address {
        case .ipv4(let host, _)?: host.isLoopback
        case .ipv6(let host, _, _)?:
            host.high == 0 && (host.low == 1 || (host.low >> 32 == 0xffff && (host.low >> 24) & 0xff == 127))
        case nil: false
        }
    }

    /// A prepared chunk as this peer may receive it: in its codec when the peer agreed to that codec, else raw
    /// (inflated back; only a peer that refused a codec ferry offers gets this).
    /// (A `zstdPrefixed` chunk is only prepared for a peer that agreed to it.)
    static func sendable(_ prepared: ChunkSource.Prepared, codecs: CodecSet) -> (codec: Codec, bytes: [UInt8]) {
        guard prepared.codec != .none, prepared.codec != .zstdPrefixed, !codecs.contains(codec: prepared.codec) else {
            return (prepared.codec, prepared.data)
        }
        let algorithm: CompressionAlgorithm = prepared.codec == .zstd ? .zstd : .zlib
        guard
            let raw = try? ChunkInflater.inflate(
                prepared.data[...], algorithm: algorithm, rawLength: prepared.rawLength)
        else { return (prepared.codec, prepared.data) }
        return (.none, raw)
    }

    func waitForNews(_ id: TransferID, _ peerID: PeerID) async {
        await withCheckedContinuation { (continuation: CheckedContinuation<Void, Never>) in
            guard operations[id]?.peers[peerID] != nil else {
                continuation.resume()
                return
            }
            operations[id]?.peers[peerID]?.waiter = continuation
        }
    }

    func wake(_ id: TransferID, _ peerID: PeerID) {
        let waiter = operations[id]?.peers[peerID]?.waiter
        operations[id]?.peers[peerID]?.waiter = nil
        waiter?.resume()
    }
}
