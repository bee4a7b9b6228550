import Testing

@testable import FerryWire

/// PROTOCOL.md 8: where a later minor version appends fields to each payload, and that a 1.0 decoder skips them. A
/// payload's appended fields come after its last field, optional parts included: after the offer's swarm section (a
/// `u16` member count of 0 when it has no swarm), after the flags byte of `offerReply` and `fileResult` (a 0 when no
/// flag is set), after the pairing commitment of an acceptor's hello. `chunk` cannot grow (its data is the rest).
@Suite("Appended fields of a newer minor version")
struct AppendedFieldsTests {
    /// What a 1.1 peer would append: more than one byte, and a first byte that a misplaced reader would take as a flag,
    /// a member count or a string length.
    static let appended: [UInt8] = [0x01, 0xFF, 0xFE, 0x00, 0x07, 0x41, 0x42]

    /// The bytes a newer peer writes before its appended fields: the optional part that must then be present, empty.
    static func emptyOptionalPart(of message: TransferMessage) -> [UInt8] {
        switch message {
        // Member count 0 (no swarm), then digest count 0 (no digests: PROTOCOL.md 11.3).
        case .offer(let offer) where offer.fileDigests.isEmpty: (offer.swarm == nil ? [0, 0] : []) + [0, 0, 0, 0]
        case .offerReply(let reply) where reply.flags == 0: [0]  // flags byte 0
        case .fileResult(let result) where result.flags == 0: [0]  // flags byte 0
        default: []
        }
    }

    static let growingCases = TransferSamples.allFrameCases.filter {
        if case .chunk = $0.message { false } else { true }
    }

    @Test(arguments: growingCases)
    func aTransferPayloadWithAppendedFieldsDecodesAsBefore(_ golden: TransferFrameCase) throws {
        let payload = try golden.payload()
        let newer = payload + Self.emptyOptionalPart(of: golden.message) + Self.appended
        #expect(try TransferMessage(frame: Frame(kind: golden.message.kind, payload: newer)) == golden.message)
        // Re-encoded, the value is the fixture again: the empty part and the appended fields are not kept.
        #expect(golden.message.frame.payload == payload)
    }

    /// The decode-only vectors of PROTOCOL.md 9, written by the independent encoder `generate-transfer.py`: a later
    /// minor version's offer, reply and result, each with its optional part written empty and `ext!` appended.
    static let extendedVectors: [(name: String, message: TransferMessage)] = [
        ("transfer-offer-extended", .offer(TransferSamples.offer)),
        ("transfer-offer-reply-extended", .offerReply(TransferSamples.offerReply)),
        ("transfer-file-result-extended", .fileResult(TransferSamples.fileResult)),
    ]

    @Test(arguments: extendedVectors.map(\.name))
    func theExtendedVectorsDecodeToTheValuesOfTheirOlderLayout(_ name: String) throws {
        let vector = try #require(Self.extendedVectors.first { $0.name == name })
        var decoder = FrameDecoder(maximumPayloadLength: Limits.maxFramePayload)
        decoder.append(try Fixtures.bytes(name))
        let frame = try #require(try decoder.nextFrame())
        #expect(try TransferMessage(frame: frame) == vector.message)
        #expect(Array(frame.payload.suffix(4)) == Array("ext!".utf8))
    }

    /// Where the optional part is absent, the first appended byte would be read as it: one byte after an offer's
    /// entries is a truncated member count, so the part must be written (empty) before appended fields.
    @Test func anOfferWithoutItsEmptySwarmSectionCannotCarryAppendedFields() throws {
        let head = try TransferSamples.frameCases[0].payload()
        #expect(throws: WireError.self) { try TransferMessage(frame: Frame(kind: .offer, payload: head + [0x01])) }
        let withPart = head + [0, 0, 0x01]
        #expect(try TransferMessage(frame: Frame(kind: .offer, payload: withPart)) == .offer(TransferSamples.offer))
    }

    /// The flags byte of a reply or result keeps unknown bits (a newer peer's flags), and what follows it is skipped.
    @Test func unknownFlagBitsArePreservedAndWhatFollowsIsSkipped() throws {
        let reply = try TransferSamples.frameCases[1].payload()
        guard
            case .offerReply(let decoded) = try TransferMessage(
                frame: Frame(kind: .offerReply, payload: reply + [0x82] + Self.appended))
        else { throw WireError.malformed("not a reply") }
        #expect(decoded.flags == 0x82 && !decoded.relay)
        #expect(decoded.files == TransferSamples.offerReply.files)
        let result = try TransferSamples.frameCases[6].payload()
        guard
            case .fileResult(let decodedResult) = try TransferMessage(
                frame: Frame(kind: .fileResult, payload: result + [0x80] + Self.appended))
        else { throw WireError.malformed("not a result") }
        #expect(decodedResult.flags == 0x80 && !decodedResult.identical)
    }

    static let hello = Hello(
        peerID: PeerID(rawValue: 0x0123_4567_89ab_cdef), deviceID: DeviceID(bytes: Array(0...31))!, mode: .peer,
        capabilities: [.zlib, .datagrams], listenPort: 41971, datagramPort: 41972, sessionID: "ferry-demo",
        displayName: "Zo\u{EB}'s laptop")

    @Test func sessionPayloadsWithAppendedFieldsDecodeAsBefore() throws {
        var acceptorHello = Self.hello
        acceptorHello.pairingCommitment = Array(repeating: 0xC0, count: 32)
        let messages: [SessionMessage] = [
            .hello(Self.hello), .hello(acceptorHello), .connectionRequest, .accept,
            .deny(Deny(reason: .serverFull, detail: "3 of 3")), .heartbeat(Heartbeat(sequence: 7)),
            .goodbye(Goodbye(reason: .shuttingDown, detail: "bye")), .pairing(Array(repeating: 0x11, count: 32)),
        ]
        for message in messages {
            let frame = message.frame
            let newer = Frame(kind: frame.kind, payload: frame.payload + Self.appended)
            // An initiator's hello has no commitment: its appended fields follow the name (4.1).
            #expect(try SessionMessage(frame: newer) == message, "\(message)")
        }
    }
}
