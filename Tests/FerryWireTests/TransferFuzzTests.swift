import FerryTestSupport
import Testing

@testable import FerryWire

/// Seeded random and mutated payloads into every transfer decoder: whatever the bytes, decoding returns a
/// message or a `WireError` and never traps; whatever decodes is valid and re-encodes to itself.
@Suite("Transfer fuzz")
struct TransferFuzzTests {
    static let iterations = 2000

    /// Random bytes, or a golden payload with a few bytes changed, truncated or extended, or with a random
    /// u32 written over a count or length field.
    static func input(_ generator: inout SplitMix64, golden: [[UInt8]]) -> [UInt8] {
        var bytes = FuzzTests.input(&generator, golden: golden)
        if bytes.count >= 30, Int.random(in: 0...3, using: &generator) == 0 {
            let at = Int.random(in: 16...(bytes.count - 4), using: &generator)
            let value = UInt32.random(in: 0...UInt32.max, using: &generator)
            for index in 0..<4 {
                bytes[at + index] = UInt8(truncatingIfNeeded: value >> UInt32(24 - 8 * index))
            }
        }
        return bytes
    }

    @Test(arguments: FrameKind.transferMessageKinds)
    func randomPayloadsNeverTrap(_ kind: FrameKind) throws {
        let golden = try TransferSamples.allFrameCases.map { try $0.payload() }
        var generator = SplitMix64(seed: 0x7AA5_0000 + UInt64(kind.rawValue))
        var decoded = 0
        for _ in 0..<Self.iterations {
            let frame = Frame(kind: kind, payload: Self.input(&generator, golden: golden))
            do {
                let message = try TransferMessage(frame: frame)
                decoded += 1
                #expect(message.kind == kind)
                #expect(throws: Never.self) { try message.validate() }
                #expect(try TransferMessage(frame: message.frame) == message)
            } catch {
                // Any WireError is an acceptable answer; the point is that nothing traps.
                #expect(!error.description.isEmpty)
            }
        }
        // The mutated fixtures keep some inputs valid, so the re-encoding path is exercised too.
        #expect(decoded > 0)
    }

    @Test func randomValidMessagesRoundTrip() throws {
        var generator = SplitMix64(seed: 0x7AA5_FFFF)
        for _ in 0..<Self.iterations {
            let message = Self.randomMessage(&generator)
            #expect(throws: Never.self) { try message.validate() }
            var decoder = FrameDecoder(maximumPayloadLength: Limits.maxFramePayload)
            decoder.append(message.encoded())
            let frame = try #require(try decoder.nextFrame())
            #expect(try TransferMessage(frame: frame) == message)
        }
    }

    static func randomMessage(_ g: inout SplitMix64) -> TransferMessage {
        let id = TransferID.random(using: &g)
        switch Int.random(in: 0...12, using: &g) {
        case 0:
            let files = (0..<Int.random(in: 1...5, using: &g)).map { _ in randomFile(&g) }
            return .offer(
                Offer(
                    transferID: id, chunkSize: UInt32.random(in: 65_536...4_194_304, using: &g),
                    codecs: CodecSet(rawValue: .random(in: 0...255, using: &g)), files: files,
                    swarm: Bool.random(using: &g) ? randomSwarm(&g) : nil,
                    fileDigests: randomDigests(files.count, &g)))
        case 1:
            if Bool.random(using: &g) {
                return .offerReply(
                    .denying(
                        id, reason: OfferDenyReason(rawValue: .random(in: 0...255, using: &g)),
                        detail: randomText(&g, maxBytes: 255)))
            }
            let files = (0..<Int.random(in: 0...5, using: &g)).map { _ in
                FileDecision(accepted: .random(using: &g), resumeOffset: .random(in: 0...UInt64.max, using: &g))
            }
            var reply = OfferReply.accepting(
                id, codecs: CodecSet(rawValue: .random(in: 0...255, using: &g)),
                files: files, detail: randomText(&g, maxBytes: 255))
            reply.flags = Bool.random(using: &g) ? .random(in: 0...255, using: &g) : 0
            return .offerReply(reply)
        case 2:
            let rawLength = UInt32.random(in: 1...300, using: &g)
            let codec = Codec(rawValue: .random(in: 0...3, using: &g))
            let count = codec == .none ? Int(rawLength) : Int.random(in: 1...Int(rawLength), using: &g)
            return .chunk(
                Chunk(
                    transferID: id, fileIndex: .random(in: 0...UInt32.max, using: &g),
                    offset: .random(in: 0...UInt64.max, using: &g), rawLength: rawLength, codec: codec,
                    sha256: g.bytes(count: 32), data: g.bytes(count: count)[...]))
        case 3:
            return .chunkAck(
                ChunkAck(
                    transferID: id, fileIndex: .random(in: 0...UInt32.max, using: &g),
                    offset: .random(in: 0...UInt64.max, using: &g),
                    status: ChunkStatus(rawValue: .random(in: 0...255, using: &g))))
        case 4:
            return .fileEnd(
                FileEnd(
                    transferID: id, fileIndex: .random(in: 0...UInt32.max, using: &g),
                    digest: g.bytes(count: 32)))
        case 5:
            return .fileResult(
                FileResult(
                    transferID: id, fileIndex: .random(in: 0...UInt32.max, using: &g),
                    status: FileStatus(rawValue: .random(in: 0...255, using: &g)), detail: randomText(&g, maxBytes: 255)
                ))
        case 6:
            return .cancel(
                TransferCancel(
                    transferID: id, reason: CancelReason(rawValue: .random(in: 0...255, using: &g)),
                    detail: randomText(&g, maxBytes: 255)))
        default:
            return randomSwarmMessage(&g, id: id)
        }
    }

    /// One of the six swarm frames (PROTOCOL.md 11.11) with random valid fields.
    static func randomSwarmMessage(_ g: inout SplitMix64, id: TransferID) -> TransferMessage {
        let swarmID = SwarmID.random(using: &g)
        let file = UInt32.random(in: 0...UInt32.max, using: &g)
        let chunk = UInt32.random(in: 0...UInt32.max, using: &g)
        switch Int.random(in: 0...5, using: &g) {
        case 0:
            let members = (0...UInt16(Limits.maxSwarmMembers + 10)).filter { _ in Int.random(in: 0...9, using: &g) == 0
            }
            return .swarmMembers(SwarmMembers(transferID: id, members: Array(members.prefix(Limits.maxSwarmMembers))))
        case 1:
            let count = Int.random(in: 1...40, using: &g)
            let entries = (0..<count).map { _ in
                ChunkDigests.Entry(seed: .random(in: 0...UInt16.max, using: &g), sha256: g.bytes(count: 32))
            }
            return .chunkDigests(
                ChunkDigests(
                    transferID: id, fileIndex: file, firstChunk: min(chunk, UInt32.max - UInt32(count) + 1),
                    entries: entries))
        case 2:
            let ranges = (0..<Int.random(in: 1...20, using: &g)).map { _ -> Range<UInt64> in
                let first = UInt64.random(in: 0...UInt64(UInt32.max), using: &g)
                return first..<(first + .random(in: 1...(UInt64(UInt32.max) + 1 - first), using: &g))
            }
            return .swarmHave(SwarmHave(swarmID: swarmID, fileIndex: file, ranges: ranges))
        case 3:
            return .swarmRequest(
                SwarmRequest(
                    swarmID: swarmID, fileIndex: file, chunkIndex: chunk,
                    codecs: CodecSet(rawValue: .random(in: 0...255, using: &g))))
        case 4:
            return .swarmRefuse(
                SwarmRefuse(
                    swarmID: swarmID, fileIndex: file, chunkIndex: chunk,
                    reason: SwarmRefuseReason(rawValue: .random(in: 0...255, using: &g))))
        default:
            return .swarmReport(
                SwarmReport(
                    transferID: id, offender: .random(in: 0...UInt16.max, using: &g),
                    reason: SwarmReportReason(rawValue: .random(in: 0...255, using: &g)), fileIndex: file,
                    chunkIndex: chunk))
        }
    }

    /// A swarm section of 2 to 20 members with distinct device IDs and printable addresses.
    static func randomSwarm(_ g: inout SplitMix64) -> Swarm {
        let addresses = ["", "10.0.0.1:41971", "[fe80::2%eth0]:41971", String(repeating: "9", count: 64)]
        let members = (0..<Int.random(in: 2...20, using: &g)).map { _ in
            SwarmMember(
                deviceID: DeviceID(bytes: g.bytes(count: 32))!,
                address: addresses.randomElement(using: &g) ?? "")
        }
        return Swarm(swarmID: SwarmID.random(using: &g), members: members)
    }

    /// Digests of some of `count` files (none, half the time): the offer's digests section.
    static func randomDigests(_ count: Int, _ g: inout SplitMix64) -> [Int: [UInt8]] {
        guard Bool.random(using: &g) else { return [:] }
        var digests: [Int: [UInt8]] = [:]
        for index in 0..<count where Bool.random(using: &g) {
            digests[index] = (0..<FileDigest.length).map { _ in UInt8.random(in: 0...255, using: &g) }
        }
        return digests
    }

    static func randomFile(_ g: inout SplitMix64) -> OfferedFile {
        var path = randomText(&g, maxBytes: 300)
        if path.isEmpty { path = "x" }
        let mediaTypes = ["", "image/jpeg", "image/png", "application/octet-stream", "text/plain"]
        return OfferedFile(
            path: path, size: .random(in: 0...UInt64.max, using: &g),
            permissions: .random(in: 0...UInt16.max, using: &g),
            modificationTime: FileTime(
                seconds: .random(in: Int64.min...Int64.max, using: &g),
                nanoseconds: .random(in: 0...999_999_999, using: &g)),
            mediaType: mediaTypes.randomElement(using: &g) ?? "",
            pixelWidth: .random(in: 0...UInt32.max, using: &g), pixelHeight: .random(in: 0...UInt32.max, using: &g))
    }

    /// Text of 0 to `maxBytes` UTF-8 bytes mixing ASCII, 2-, 3- and 4-byte characters, NUL and "/".
    static func randomText(_ g: inout SplitMix64, maxBytes: Int) -> String {
        let alphabet: [Unicode.Scalar] = ["a", "Z", "/", ".", " ", "\u{0}", "ë", "€", "🚢"]
        var text = String.UnicodeScalarView()
        var bytes = 0
        for _ in 0..<Int.random(in: 0...40, using: &g) {
            let scalar = alphabet.randomElement(using: &g) ?? "a"
            guard bytes + String(scalar).utf8.count <= maxBytes else { break }
            bytes += String(scalar).utf8.count
            text.append(scalar)
        }
        return String(text)
    }
}
