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

    /// The window (raw bytes sent and not acknowledged) of each peer of a send: `compressedWindowFactor` times the
    /// configured one when one peer gets chunks compressed by the level controller (`auto` over a link that is
    /// not loopback), else the configured one.
    ///
    /// Why: compressed, the window's raw bytes are a fifth to a two-hundredth of that on the wire. Over a
    /// 100 Mbit/s link a tar of /usr/include turns 100-200 times compressible for 44 MiB; with 8 MiB in flight
    /// the pump waited for the acknowledgements of the text before (about 1.6 MB, 0.13 s of the link), then
    /// hashed and compressed the rest of the run (5 ms a chunk, CPU-bound) while the link idled. Twice the window
    /// lets it run ahead through that part while the link still drains the text. The link writer's high-water
    /// mark (4 MiB of wire bytes) still bounds what waits for the link, and the receiver queues at most
    /// `IncomingTransfers.maxQueuedBytes` (64 MiB) of raw writes whatever the window. Loopback peers (sent raw) and
    /// broadcasts (whose cache holds 24 MiB of chunks for the peers behind) keep the configured window.
    static func window(_ configuration: TransferConfiguration, compressing: Bool, peers: Int) -> Int {
        compressing && peers == 1 ? configuration.window * compressedWindowFactor : configuration.window
    }

    /// How many times the configured window one peer sent chunks compressed by `auto` gets
    /// (`window(_:compressing:peers:)`): 3, 24 MiB. Against 2 (16 MiB), alternating over the 100 Mbit/s link of
    /// `scripts/compress-bench`, 5 rounds: 97.7 against 93.5 MB/s (rsync -z 98.9), the receiver's peak RSS 31.5 MiB
    /// in `ferry-bench compare` row 4; 4 times (32 MiB) was no faster than 3 (97.0) and once took the receiver to
    /// 50 MiB. It stays well under the 64 MiB a receiver queues from one sender (PROTOCOL.md 11.10 rule 6).
    static let compressedWindowFactor = 3

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
        resumePump(id, peerID)
        wakePeerRoomWaiters(peerID)
    }

    /// Resumes the pump of `id` to `peerID` if it waits for news.
    private func resumePump(_ id: TransferID, _ peerID: PeerID) {
        let waiter = operations[id]?.peers[peerID]?.waiter
        operations[id]?.peers[peerID]?.waiter = nil
        waiter?.resume()
    }

    /// Whether `length` more bytes of chunk data to `peerID` keep all its transfers' unacknowledged data within
    /// `OutgoingOperations.maxInFlightPerPeer` (`OutgoingOperations.hasPeerRoom`).
    func hasPeerRoom(for length: Int, _ id: TransferID, _ peerID: PeerID) -> Bool {
        let total = operations.inFlight(to: peerID)
        probe.largestInFlightPerPeer = max(probe.largestInFlightPerPeer, total)
        return operations.hasPeerRoom(for: length, total: total, id, peerID)
    }

    /// Waits for news of any transfer to `peerID` (`hasPeerRoom` said no); returns how long.
    func waitForPeerRoom(_ id: TransferID, _ peerID: PeerID) async -> Duration {
        let started = clock.now
        await waitForNews(id, peerID)
        return clock.now - started
    }

    /// The send `id` is over: its record goes, and the pumps its unacknowledged data held back are woken.
    func removeOperation(_ id: TransferID) {
        for peerID in operations.remove(id) { wakePeerRoomWaiters(peerID) }
    }

    /// Wakes the pumps that wait for room to `peerID` (news of one of its transfers, or one of them ended).
    func wakePeerRoomWaiters(_ peerID: PeerID) {
        for id in operations.takePeerRoomWaiters(peerID) { resumePump(id, peerID) }
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
