import FerrySession
import FerryWire
import Testing

/// Mallory's side of a transfer, frame by frame: what a hostile (or just unusual) sender can put on the wire, with
/// no engine of its own to keep it honest.
struct HostileSender {
    let session: Session
    let receiver: PeerID
    let transferID = TransferID.random()

    /// An offer of `files` (name and size) in chunks of `chunkSize`, zlib allowed.
    func offer(_ files: [(String, UInt64)], chunkSize: Int = Limits.minChunkSize) -> Offer {
        Offer(
            transferID: transferID, chunkSize: UInt32(chunkSize), codecs: [.zlib],
            files: files.map {
                OfferedFile(path: $0.0, size: $0.1, modificationTime: FileTime(seconds: 0, nanoseconds: 0))
            })
    }

    /// An offer of one file whose path is `path`, encoded by hand (big-endian, as PROTOCOL.md lays it out), so that
    /// it can break rules our own encoder refuses to (a path over 4096 bytes, bytes that are not UTF-8).
    func sendRawOffer(path: [UInt8], size: UInt64 = 4) async throws {
        func be<T: FixedWidthInteger>(_ value: T) -> [UInt8] {
            (0..<T.bitWidth / 8).reversed().map { UInt8(truncatingIfNeeded: value >> ($0 * 8)) }
        }
        var payload = transferID.bytes + be(UInt32(Limits.minChunkSize)) + [CodecSet.zlib.rawValue] + be(UInt32(1))
        payload += be(UInt16(truncatingIfNeeded: path.count)) + path + be(size) + be(UInt16(0o644))
        payload += be(UInt64(0)) + be(UInt32(0)) + [0] + be(UInt32(0)) + be(UInt32(0))
        let header = be(FrameKind.offer.rawValue) + be(UInt32(payload.count))
        try await session.sendTransferFrame([header, payload], to: receiver)
    }

    func send(_ message: TransferMessage) async throws {
        try await session.sendTransferFrame([message.frame.encoded()], to: receiver)
    }

    /// A chunk of `raw` at `offset`, sent raw, or as `data` in `codec` when given (a bomb, a lie).
    func sendChunk(file: UInt32, offset: UInt64, raw: [UInt8], codec: Codec = .none, data: [UInt8]? = nil)
        async throws
    {
        let payload = data ?? raw
        let header = Chunk.frameHeader(
            transferID: transferID, fileIndex: file, offset: offset, rawLength: UInt32(raw.count), codec: codec,
            sha256: FileDigest.chunkDigest(raw), dataLength: payload.count)
        try await session.sendTransferFrame([header, payload], to: receiver)
    }

    /// A fileEnd with the file digest of `bytes` cut into chunks of `chunkSize` (the offer's, by default the one
    /// `offer` uses).
    func sendEnd(file: UInt32, of bytes: [UInt8], chunkSize: Int = Limits.minChunkSize) async throws {
        let digest = FileDigest.of(bytes, chunkSize: chunkSize)
        try await send(.fileEnd(FileEnd(transferID: transferID, fileIndex: file, digest: digest)))
    }

    /// What the receiver did next, as seen from this side.
    enum Next {
        case message(TransferMessage)
        /// The session reported the receiver's link closed.
        case linkClosed
        /// The session's stream of transfer events ended (the session closed) without that.
        case streamEnded
        /// Nothing at all within the time allowed: a test waiting for something that never comes fails instead of
        /// hanging.
        case timedOut
    }

    /// The next transfer message from the receiver, or what ended the wait. After `.timedOut` the event stream is
    /// finished (cancelling a waiting iterator ends an AsyncStream): the test is failing by then.
    /// Offers `bytes` as one file `name` (expecting it accepted), sends every chunk and the file's end, and returns
    /// the receiver's result for it.
    func sendWhole(_ name: String, _ bytes: [UInt8], chunkSize: Int) async throws -> FileResult? {
        try await send(.offer(offer([(name, UInt64(bytes.count))], chunkSize: chunkSize)))
        #expect(try #require(await reply()).accepted)
        for offset in stride(from: 0, to: bytes.count, by: chunkSize) {
            try await sendChunk(
                file: 0, offset: UInt64(offset), raw: Array(bytes[offset..<min(offset + chunkSize, bytes.count)]))
        }
        try await sendEnd(file: 0, of: bytes, chunkSize: chunkSize)
        return await result()
    }

    func nextEvent(timeout: Duration = .seconds(60)) async -> Next {
        let events = session.transferEvents
        let receiver = self.receiver
        return await withTaskGroup(of: Next.self) { group in
            group.addTask {
                for await event in events {
                    switch event {
                    case .frame(let frame, let peer) where peer == receiver:
                        if let message = try? TransferMessage(frame: frame) { return .message(message) }
                    case .peerDisconnected(let peer, _) where peer == receiver:
                        return .linkClosed
                    default:
                        continue
                    }
                }
                return Task.isCancelled ? .timedOut : .streamEnded
            }
            group.addTask {
                try? await Task.sleep(for: timeout)
                return .timedOut
            }
            let first = await group.next() ?? .timedOut
            group.cancelAll()
            return first
        }
    }

    /// The next transfer message from the receiver, or nil once the link is closed (or the wait ended otherwise).
    func next() async -> TransferMessage? {
        if case .message(let message) = await nextEvent() { return message }
        return nil
    }

    /// Skips messages until `match` returns a value; nil if the link closed first.
    func waitFor<T>(_ match: (TransferMessage) -> T?) async -> T? {
        while let message = await next() {
            if let value = match(message) { return value }
        }
        return nil
    }

    /// Waits for the receiver's reply to the offer.
    func reply() async -> OfferReply? {
        await waitFor { if case .offerReply(let reply) = $0 { reply } else { nil } }
    }

    /// Waits for an acknowledgement of a chunk of `file`.
    func ack() async -> ChunkAck? {
        await waitFor { if case .chunkAck(let ack) = $0 { ack } else { nil } }
    }

    /// Waits for the result of a file.
    func result() async -> FileResult? {
        await waitFor { if case .fileResult(let result) = $0 { result } else { nil } }
    }

    /// Waits until the receiver closed the link, skipping its messages; false if the session's stream ended
    /// first or nothing happened within the time allowed.
    func linkClosed() async -> Bool {
        while true {
            switch await nextEvent() {
            case .message: continue
            case .linkClosed: return true
            case .streamEnded, .timedOut: return false
            }
        }
    }
}
