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

    /// Sends `file`'s `fileEnd` to this peer, its digest from the source. A file that changed meanwhile is given up
    /// instead (for this peer, or, `inSwarm`, for every member the seeding loop serves); a file that cannot be read
    /// cancels the send.
    func sendFileEnd(_ file: Int, _ id: TransferID, _ peerID: PeerID, source: ChunkSource, inSwarm: Bool) async {
        withPeer(id, peerID) { $0.machine.fileEndSent(file: file) }
        let digest: [UInt8]
        do {
            digest = try await source.digest(of: file)
        } catch .changed {
            let text = await source.failureText(of: file)
            if inSwarm { await abandonInSwarm(file, id, text) } else { await abandon(file, id, peerID, text) }
            return
        } catch {
            await cancelOperation(id, reason: .readFailed, detail: error.description)
            return
        }
        guard recordSentDigest(digest, of: file, id, peerID) else { return }
        let end = FileEnd(transferID: id, fileIndex: UInt32(file), digest: digest)
        if !(await send(.fileEnd(end), to: peerID, discardable: id)) {
            await failPeer(id, peerID, "the link failed", cancel: nil)
        }
    }
}
