/// A decoded frame of the transfer protocol (kinds 0x0100-0x01FF), as the session hands it over in
/// `SessionMessage.transfer(_:)`.
///
/// Unlike session frames, an unknown kind in the transfer range is not skipped: those kinds are critical, so
/// a frame this version does not know is `unknownCriticalFrame` and closes the link. Known payloads ignore
/// trailing bytes (except `chunk`, whose data is the rest of the payload).
///
/// | kind   | case           | payload |
/// | ------ | -------------- | ------- |
/// | 0x0100 | offer          | see `Offer` |
/// | 0x0101 | offerReply     | see `OfferReply` |
/// | 0x0102 | chunk          | see `Chunk` |
/// | 0x0103 | chunkAck       | see `ChunkAck` |
/// | 0x0104 | fileEnd        | see `FileEnd` |
/// | 0x0105 | fileResult     | see `FileResult` |
/// | 0x0106 | transferCancel | see `TransferCancel` |
/// | 0x0107 | swarmMembers   | see `SwarmMembers` |
/// | 0x0108 | chunkDigests   | see `ChunkDigests` |
/// | 0x0109 | swarmHave      | see `SwarmHave` |
/// | 0x010A | swarmRequest   | see `SwarmRequest` |
/// | 0x010B | swarmRefuse    | see `SwarmRefuse` |
/// | 0x010C | swarmReport    | see `SwarmReport` |
public enum TransferMessage: Equatable, Sendable {
    case offer(Offer)
    case offerReply(OfferReply)
    case chunk(Chunk)
    case chunkAck(ChunkAck)
    case fileEnd(FileEnd)
    case fileResult(FileResult)
    case cancel(TransferCancel)
    case swarmMembers(SwarmMembers)
    case chunkDigests(ChunkDigests)
    case swarmHave(SwarmHave)
    case swarmRequest(SwarmRequest)
    case swarmRefuse(SwarmRefuse)
    case swarmReport(SwarmReport)

    /// Throws `unknownCriticalFrame` for any other kind, `malformed` / `invalidField` for bad payloads. A
    /// chunk's data stays a slice of `frame.payload`: nothing is copied.
    public init(frame: Frame) throws(WireError) {
        let payload = frame.payload[...]
        switch frame.kind {
        case .offer: self = .offer(try Offer(payload: payload))
        case .offerReply: self = .offerReply(try OfferReply(payload: payload))
        case .chunk: self = .chunk(try Chunk(payload: payload))
        case .chunkAck: self = .chunkAck(try ChunkAck(payload: payload))
        case .fileEnd: self = .fileEnd(try FileEnd(payload: payload))
        case .fileResult: self = .fileResult(try FileResult(payload: payload))
        case .transferCancel: self = .cancel(try TransferCancel(payload: payload))
        case .swarmMembers: self = .swarmMembers(try SwarmMembers(payload: payload))
        case .chunkDigests: self = .chunkDigests(try ChunkDigests(payload: payload))
        case .swarmHave: self = .swarmHave(try SwarmHave(payload: payload))
        case .swarmRequest: self = .swarmRequest(try SwarmRequest(payload: payload))
        case .swarmRefuse: self = .swarmRefuse(try SwarmRefuse(payload: payload))
        case .swarmReport: self = .swarmReport(try SwarmReport(payload: payload))
        default: throw .unknownCriticalFrame(kind: frame.kind.rawValue)
        }
    }

    /// The frame kind of this message.
    public var kind: FrameKind {
        switch self {
        case .offer: .offer
        case .offerReply: .offerReply
        case .chunk: .chunk
        case .chunkAck: .chunkAck
        case .fileEnd: .fileEnd
        case .fileResult: .fileResult
        case .cancel: .transferCancel
        case .swarmMembers: .swarmMembers
        case .chunkDigests: .chunkDigests
        case .swarmHave: .swarmHave
        case .swarmRequest: .swarmRequest
        case .swarmRefuse: .swarmRefuse
        case .swarmReport: .swarmReport
        }
    }

    /// The transfer this message belongs to: the 16-byte ID every transfer payload starts with. For the frames
    /// members exchange (`swarmHave`, `swarmRequest`, `swarmRefuse`) it is the swarm ID's bytes.
    public var transferID: TransferID {
        switch self {
        case .offer(let offer): offer.transferID
        case .offerReply(let reply): reply.transferID
        case .chunk(let chunk): chunk.transferID
        case .chunkAck(let ack): ack.transferID
        case .fileEnd(let end): end.transferID
        case .fileResult(let result): result.transferID
        case .cancel(let cancel): cancel.transferID
        case .swarmMembers(let members): members.transferID
        case .chunkDigests(let digests): digests.transferID
        case .swarmHave(let have): have.swarmID.transferID
        case .swarmRequest(let request): request.swarmID.transferID
        case .swarmRefuse(let refuse): refuse.swarmID.transferID
        case .swarmReport(let report): report.transferID
        }
    }

    /// Throws `invalidField` / `malformed` / `payloadTooLarge` when this value cannot be encoded. Call it on
    /// anything built from local input before `frame`.
    public func validate() throws(WireError) {
        switch self {
        case .offer(let offer): try offer.validate()
        case .offerReply(let reply): try reply.validate()
        case .chunk(let chunk): try chunk.validate()
        case .chunkAck: break
        case .fileEnd(let end): try end.validate()
        case .fileResult(let result): try result.validate()
        case .cancel(let cancel): try cancel.validate()
        case .swarmMembers(let members): try members.validate()
        case .chunkDigests(let digests): try digests.validate()
        case .swarmHave(let have): try have.validate()
        case .swarmRequest, .swarmRefuse, .swarmReport: break
        }
    }

    /// The frame carrying this message. Precondition: `validate()` passes. (To send one chunk to many peers
    /// without copying its data, use `Chunk.frameHeader(...)` instead.)
    public var frame: Frame {
        var writer: ByteWriter
        switch self {
        case .offer(let offer):
            writer = ByteWriter(reservingCapacity: offer.encodedLength)
            offer.write(to: &writer)
        case .offerReply(let reply):
            writer = ByteWriter()
            reply.write(to: &writer)
        case .chunk(let chunk):
            writer = ByteWriter(reservingCapacity: Chunk.headerLength + chunk.data.count)
            chunk.write(to: &writer)
        case .chunkAck(let ack):
            writer = ByteWriter()
            ack.write(to: &writer)
        case .fileEnd(let end):
            writer = ByteWriter()
            end.write(to: &writer)
        case .fileResult(let result):
            writer = ByteWriter()
            result.write(to: &writer)
        case .cancel(let cancel):
            writer = ByteWriter()
            cancel.write(to: &writer)
        case .swarmMembers(let members):
            writer = ByteWriter()
            members.write(to: &writer)
        case .chunkDigests(let digests):
            writer = ByteWriter(reservingCapacity: 26 + digests.entries.count * ChunkDigests.entryLength)
            digests.write(to: &writer)
        case .swarmHave(let have):
            writer = ByteWriter()
            have.write(to: &writer)
        case .swarmRequest(let request):
            writer = ByteWriter()
            request.write(to: &writer)
        case .swarmRefuse(let refuse):
            writer = ByteWriter()
            refuse.write(to: &writer)
        case .swarmReport(let report):
            writer = ByteWriter()
            report.write(to: &writer)
        }
        return Frame(kind: kind, payload: writer.bytes)
    }

    /// Header and payload of `frame`, ready to write to the link.
    public func encoded() -> [UInt8] {
        frame.encoded()
    }
}
